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
	// ReplyObjectName is the name PrepareReply stores a reply under.
	ReplyObjectName = func(subject string) string { return replyName(TestReplyKey, subject) }
	ErrReplyStored  = errReplyStored
	// ErrUnreachable: chunks too large for the reading connection (Nak'd
	// by Consume, not Term'd).
	ErrUnreachable = errUnreachable
)

// PrepareLimit is Prepare with the decision's limit lowered to limit.
func (s *Store) PrepareLimit(ctx context.Context, m *nats.Msg, reserve int, limit int64) (*nats.Msg, error) {
	return claimops.For(s).Prepare(ctx, m, reserve, limit, "")
}

// TestReplyKey is the reply key of PrepareReply's caller.
const TestReplyKey = "00112233445566778899aabbccddeeff"

// PrepareReply is PrepareLimit for a reply to a caller whose reply key is
// TestReplyKey (stored once per reply subject).
func (s *Store) PrepareReply(ctx context.Context, m *nats.Msg, reserve int, limit int64) (*nats.Msg, error) {
	return claimops.For(s).Prepare(ctx, m, reserve, limit, TestReplyKey)
}

// MetaDigest is the object metadata key of the HighwayHash-256 digest.
const MetaDigest = metaDigestKey
