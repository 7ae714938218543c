package claimcheck

import (
	"context"

	"github.com/nats-io/nats.go"
)

// PrepareLimit is Prepare with the effective limit lowered to limit when
// limit is positive and below the connection's max_payload: a caller's own
// cap on its messages, such as shim.WithPayloadCap. The decision (fits,
// claim check, refuse) is the same one Prepare makes, against the
// connection's one limit state; chunks are still sized to the connection's
// max_payload. limit <= 0 means no cap (Prepare).
func (s *Store) PrepareLimit(ctx context.Context, m *nats.Msg, reserve int, limit int64) (*nats.Msg, error) {
	ref, err := s.prepare(ctx, m, reserve, limit, false)
	if err != nil {
		return nil, notPublished(err)
	}
	return ref, nil
}

// Conn returns the connection the Store publishes on (that of the
// JetStream context given to New).
func (s *Store) Conn() *nats.Conn { return s.nc }

// PrepareReply is PrepareLimit for a reply: m.Subject is the request's
// reply subject, and a payload is stored under ReplyObjectName(m.Subject)
// instead of a random name, so that the caller can delete it even when
// the reference never reached it. It refuses with ErrReplyStored (which
// also matches ErrReservedHeader; nothing of this reply is left stored)
// when a reply of that name is already stored, or is stored by another
// responder while this one uploads.
func (s *Store) PrepareReply(ctx context.Context, m *nats.Msg, reserve int, limit int64) (*nats.Msg, error) {
	ref, err := s.prepare(ctx, m, reserve, limit, true)
	if err != nil {
		return nil, notPublished(err)
	}
	return ref, nil
}
