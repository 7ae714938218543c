package shim

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// manyInbox is a RequestMany's reply inbox: the replies with the time each
// arrived (StallTimeout is measured between arrivals, not from when the
// loop asks for the next one), bounded as nats.go bounds a subscription's
// pending messages; replies beyond the bound are dropped and reported
// once, as a slow consumer.
type manyInbox struct {
	maxMsgs, maxBytes int // nats.go's default pending limits

	mu      sync.Mutex
	q       []arrival
	bytes   int
	dropped bool
	wake    chan struct{} // capacity 1
}

// arrival is a reply and when it arrived.
type arrival struct {
	m  *nats.Msg
	at time.Time
}

// errStalled: no reply arrived within the stall gap after the previous one.
var errStalled = errors.New("natssend: no reply within the stall gap")

func newManyInbox() *manyInbox {
	return &manyInbox{maxMsgs: nats.DefaultSubPendingMsgsLimit, maxBytes: nats.DefaultSubPendingBytesLimit, wake: make(chan struct{}, 1)}
}

// onMsg is the subscription's handler: it stamps and queues m.
func (b *manyInbox) onMsg(m *nats.Msg) {
	at := time.Now()
	b.mu.Lock()
	if len(b.q) >= b.maxMsgs || b.bytes+len(m.Data) > b.maxBytes {
		b.dropped = true
	} else {
		b.q = append(b.q, arrival{m: m, at: at})
		b.bytes += len(m.Data)
	}
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// next returns the next reply, waiting until ctx ends. With a non-zero by,
// only a reply that arrived by then is returned: errStalled when the next
// one came later or none came by then. Dropped replies are reported first
// (nats.ErrSlowConsumer).
func (b *manyInbox) next(ctx context.Context, by time.Time) (arrival, error) {
	var stall <-chan time.Time
	if !by.IsZero() {
		t := time.NewTimer(time.Until(by))
		defer t.Stop()
		stall = t.C
	}
	for over := false; ; {
		b.mu.Lock()
		switch {
		case b.dropped:
			b.dropped = false
			b.mu.Unlock()
			return arrival{}, nats.ErrSlowConsumer
		case len(b.q) > 0 && !by.IsZero() && b.q[0].at.After(by):
			b.mu.Unlock()
			return arrival{}, errStalled // it came after the gap
		case len(b.q) > 0:
			a := b.q[0]
			b.q[0] = arrival{}
			b.q = b.q[1:]
			b.bytes -= len(a.m.Data)
			b.mu.Unlock()
			return a, nil
		}
		b.mu.Unlock()
		if over {
			return arrival{}, errStalled
		}
		select {
		case <-b.wake:
		case <-stall:
			over = true // one more look: a reply stamped by the bound may be queued
		case <-ctx.Done():
			return arrival{}, ctx.Err()
		}
	}
}
