package claimcheck

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/connlimit"
)

// PrepareLimit is Prepare with the effective limit lowered to limit when
// limit is positive and below the connection's max_payload: a caller's own
// cap on its messages, such as shim.WithPayloadCap. The decision (fits,
// claim check, refuse) is the same one Prepare makes, against the
// connection's one limit state; chunks are still sized to the connection's
// max_payload. limit <= 0 means no cap (Prepare).
func (s *Store) PrepareLimit(ctx context.Context, m *nats.Msg, reserve int, limit int64) (*nats.Msg, error) {
	ref, err := s.prepareLimit(ctx, m, reserve, limit)
	if err != nil {
		return nil, notPublished(err)
	}
	return ref, nil
}

func (s *Store) prepareLimit(ctx context.Context, m *nats.Msg, reserve int, capLimit int64) (*nats.Msg, error) {
	if capLimit <= 0 {
		return s.prepare(ctx, m, reserve)
	}
	if err := s.checkPublish(m); err != nil {
		return nil, err
	}
	if reserve < 0 {
		return nil, fmt.Errorf("%w: claimcheck: negative reserve %d", ErrInvalidOption, reserve)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	connLimit, err := s.limit.Limit(ctx)
	if err != nil {
		return nil, err
	}
	eff := min(connLimit, capLimit)
	v, err := s.decide(m, m.Header, int64(reserve), eff, connLimit)
	switch v {
	case connlimit.Fits:
		return m, nil
	case connlimit.Refuse:
		return nil, err
	}
	ref, _, err := s.reference(ctx, m, m.Header, connLimit)
	return ref, err
}

// Conn returns the connection the Store publishes on (that of the
// JetStream context given to New).
func (s *Store) Conn() *nats.Conn { return s.nc }
