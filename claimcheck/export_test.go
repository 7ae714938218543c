package claimcheck

import (
	"context"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/claimops"
)

// What package shim reaches through internal/claimops, for this
// package's external tests.

// MetaSubject is the object metadata key of the subject.
const MetaSubject = metaSubjectKey

var (
	ReplyObjectName = replyObjectName
	ErrReplyStored  = errReplyStored
	// ErrUnreachable: chunks too large for the reading connection (Nak'd
	// by Consume, not Term'd).
	ErrUnreachable = errUnreachable
)

// PrepareLimit is Prepare with the decision's limit lowered to limit.
func (s *Store) PrepareLimit(ctx context.Context, m *nats.Msg, reserve int, limit int64) (*nats.Msg, error) {
	return claimops.PrepareMsg(ctx, s, m, reserve, limit, false)
}

// PrepareReply is PrepareLimit for a reply (stored once per reply subject).
func (s *Store) PrepareReply(ctx context.Context, m *nats.Msg, reserve int, limit int64) (*nats.Msg, error) {
	return claimops.PrepareMsg(ctx, s, m, reserve, limit, true)
}

// MetaDigest is the object metadata key of the HighwayHash-256 digest.
const MetaDigest = metaDigestKey
