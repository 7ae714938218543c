package connlimit

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// DefaultFlushTimeout bounds the round trip when the caller's context has
// no deadline.
const DefaultFlushTimeout = 5 * time.Second

// Tracker records the reconnect generation of a connection whose
// max_payload is known to be current. The zero value is ready to use and
// considers nothing verified. A Tracker must be used with one connection.
type Tracker struct {
	// verified is the connection's reconnect count plus one at the last
	// successful round trip; zero means never verified.
	verified atomic.Uint64
}

// MaxPayload returns the connection's current effective max_payload (the
// minimum of server, account and user limits). It performs a PING/PONG
// round trip first when the limit has not been verified since the last
// (re)connect. The error is nats.ErrConnectionClosed,
// nats.ErrConnectionReconnecting or the round trip's error; in every error
// case nothing was sent.
func (t *Tracker) MaxPayload(ctx context.Context, nc *nats.Conn) (int64, error) {
	if nc == nil {
		return 0, nats.ErrInvalidConnection
	}
	gen := nc.Stats().Reconnects + 1
	if t.verified.Load() == gen {
		return nc.MaxPayload(), nil
	}
	if err := Refresh(ctx, nc); err != nil {
		return 0, err
	}
	// Record the generation read before the round trip: a reconnect that
	// happened during it makes the next call verify again.
	t.verified.Store(gen)
	return nc.MaxPayload(), nil
}

// Refresh performs one PING/PONG round trip so that any INFO the server
// sent before its PONG (in particular the account-adjusted max_payload) has
// been processed when it returns.
func Refresh(ctx context.Context, nc *nats.Conn) error {
	switch {
	case nc.IsClosed():
		return nats.ErrConnectionClosed
	case nc.IsReconnecting():
		return nats.ErrConnectionReconnecting
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultFlushTimeout)
		defer cancel()
	}
	if err := nc.FlushWithContext(ctx); err != nil {
		return fmt.Errorf("natssend: confirming the connection's max_payload: %w", err)
	}
	return nil
}
