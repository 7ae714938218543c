package claimcheck

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// readCallTimeout bounds one attempt of a JetStream API call a read makes
// (the object's info, creating its consumer, the stream's and the
// consumer's state). A request written just before the connection broke
// gets no answer: without its own bound it would wait out the whole read.
const readCallTimeout = 2 * time.Second

// readCall runs call, a JetStream API request that only reads (or creates
// a read's own ephemeral consumer, or deletes an object: idempotent), each
// attempt bounded by
// readCallTimeout, and runs it again after a failure that says nothing
// about the object (a timeout, a lost or reconnecting connection, no
// responders while a stream leader is elected) until ctx ends. Repeating
// such a call is safe: reads have no effect, and a consumer created twice
// is only an idle ephemeral one, which the server removes after its
// inactive threshold. An answer from the server (not found, an API error)
// and a closed connection are returned at once.
func (s *Store) readCall(ctx context.Context, call func(ctx context.Context) error) error {
	return s.callAgain(ctx, transientRead, call)
}

// callAgain is readCall with transient deciding which failures are made
// again.
func (s *Store) callAgain(ctx context.Context, transient func(error) bool, call func(ctx context.Context) error) error {
	for {
		if err := s.waitConnected(ctx); err != nil {
			return err
		}
		actx, cancel := context.WithTimeout(ctx, readCallTimeout)
		err := call(actx)
		cancel()
		if err == nil || !transient(err) || s.nc.IsClosed() {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w; %w", ctx.Err(), err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w; %w", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// transientRead reports whether a read call's error may go away when the
// call is made again: it timed out (its own bound, not the read's), the
// connection was lost or is reconnecting, or nothing answered.
func transientRead(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		// The server answered. "No suitable peers" and similar cluster
		// states after a failover are answers too, but pass: a new leader
		// is elected within the read's deadline.
		return apiErr.Code >= 500
	}
	return errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrDisconnected) ||
		errors.Is(err, nats.ErrConnectionReconnecting)
}

// waitConnected waits until the connection is connected (not
// reconnecting), or ctx ends. A closed connection is an error at once.
func (s *Store) waitConnected(ctx context.Context) error {
	for {
		switch {
		case s.nc.IsClosed():
			return nats.ErrConnectionClosed
		case s.nc.IsConnected():
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
