package shim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/wire"
)

// DefaultPublishTimeout bounds Publish and PublishMsg, which take no
// context: the claim check upload of a message that does not fit included.
// Use PublishContext or PublishMsgContext for another deadline.
const DefaultPublishTimeout = time.Minute

// Publish publishes data on subject. See PublishMsgContext.
func Publish(nc *nats.Conn, subject string, data []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultPublishTimeout)
	defer cancel()
	return PublishMsgContext(ctx, nc, &nats.Msg{Subject: subject, Data: data})
}

// PublishMsg publishes m. See PublishMsgContext.
func PublishMsg(nc *nats.Conn, m *nats.Msg) error {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultPublishTimeout)
	defer cancel()
	return PublishMsgContext(ctx, nc, m)
}

// PublishContext publishes data on subject. See PublishMsgContext.
func PublishContext(ctx context.Context, nc *nats.Conn, subject string, data []byte) error {
	return PublishMsgContext(ctx, nc, &nats.Msg{Subject: subject, Data: data})
}

// PublishMsgContext publishes m (subject, reply, headers, body) once.
//
// A message that fits the connection's current max_payload, header block
// included, is published unchanged. One that does not is sent as a claim
// check: its body goes to the connection's claim check store (the default
// bucket, created on first use, one store per connection) and a reference
// is published instead; receivers get the body back with
// claimcheck.(*Store).Resolve or the claimcheck subscription helpers. A
// body over claimcheck.MaxSize, or a connection without JetStream, gives a
// PAYLOAD_TOO_LARGE error and nothing is published.
//
// For another bucket, TTL or storage, make a claimcheck.Store and use its
// PublishMsg.
func PublishMsgContext(ctx context.Context, nc *nats.Conn, m *nats.Msg) error {
	if m == nil {
		return notSent(CodeInvalidArgument, "nil message; not sent", nats.ErrInvalidMsg)
	}
	if nc == nil {
		return notSent(CodeInvalidArgument, "nil connection; not sent", nats.ErrInvalidConnection)
	}
	if k, bad := wire.InvalidHeaderKey(m.Header); bad {
		return notSent(CodeInvalidArgument, fmt.Sprintf("invalid header key %q; not sent", k), nats.ErrBadHeaderMsg)
	}
	st := states.get(nc)
	limit, err := st.limit.MaxPayload(ctx, nc)
	if err != nil {
		return sendError(ctx, err, false)
	}
	if int64(MsgSize(m)) <= limit {
		return sendError(ctx, nc.PublishMsg(m), false)
	}
	store, err := st.claimStore(ctx, nc)
	if err != nil {
		return &Error{
			Code:    CodePayloadTooLarge,
			Message: fmt.Sprintf("message of %d bytes exceeds the %d-byte limit and the claim check store is unavailable; not sent", MsgSize(m), limit),
			Size:    int64(MsgSize(m)), Limit: limit, outcome: OutcomeNotRun,
			err: errors.Join(nats.ErrMaxPayload, err),
		}
	}
	if err := store.PublishMsg(ctx, m); err != nil {
		return claimError(ctx, m, limit, err)
	}
	return nil
}

// claimError maps a claim check failure. The store says when nothing was
// published (claimcheck.ErrNotPublished); anything else may have been.
func claimError(ctx context.Context, m *nats.Msg, limit int64, err error) error {
	switch {
	case errors.Is(err, claimcheck.ErrTooLarge):
		return &Error{
			Code:    CodePayloadTooLarge,
			Message: "message does not fit even as a claim check; not sent",
			Size:    int64(MsgSize(m)), Limit: limit, outcome: OutcomeNotRun, err: err,
		}
	case errors.Is(err, claimcheck.ErrReservedHeader):
		return notSent(CodeInvalidArgument, "message already carries a claim check header; not sent", err)
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return sendError(ctx, err, !errors.Is(err, claimcheck.ErrNotPublished))
}

// connState is what the shim keeps per connection for Publish: the
// max_payload tracker and the lazily made claim check store.
type connState struct {
	limit connlimit.Tracker
	mu    sync.Mutex
	store *claimcheck.Store
}

func (st *connState) claimStore(ctx context.Context, nc *nats.Conn) (*claimcheck.Store, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.store != nil {
		return st.store, nil
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	s, err := claimcheck.New(ctx, js)
	if err != nil {
		return nil, err // not cached: the next publish tries again
	}
	st.store = s
	return s, nil
}

// registry maps connections to their state. It is the one piece of
// package-level state in natssend, needed because Publish(nc, ...) mirrors
// nc.Publish and has nowhere else to keep a connection's store. Entries of
// closed connections are dropped whenever an entry is added, so the map
// holds the live connections plus at most those closed since the last new
// one; a closed connection's state is never used again.
type registry struct {
	m     sync.Map // *nats.Conn -> *connState
	sweep sync.Mutex
}

var states = &registry{}

func (r *registry) get(nc *nats.Conn) *connState {
	if st, ok := r.m.Load(nc); ok {
		return st.(*connState)
	}
	r.sweep.Lock()
	defer r.sweep.Unlock()
	r.m.Range(func(k, _ any) bool {
		if k.(*nats.Conn).IsClosed() {
			r.m.Delete(k)
		}
		return true
	})
	st, _ := r.m.LoadOrStore(nc, &connState{})
	return st.(*connState)
}

// size returns the number of connections with state (for tests).
func (r *registry) size() int {
	n := 0
	r.m.Range(func(_, _ any) bool { n++; return true })
	return n
}
