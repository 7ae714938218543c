package shim

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// The inbox of RequestMany: replies beyond its bound are dropped and
// reported once, before the replies it kept; with a stall bound, a reply
// stamped after it ends the collection and one stamped by it is taken.
func TestManyInboxBoundsAndStall(t *testing.T) {
	b := newManyInbox()
	b.maxMsgs, b.maxBytes = 2, 10
	for _, d := range []string{"a", "b", "c"} { // "c" is over the count
		b.onMsg(&nats.Msg{Data: []byte(d)})
	}
	b.onMsg(&nats.Msg{Data: make([]byte, 11)}) // over the bytes
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := b.next(ctx, time.Time{}); !errors.Is(err, nats.ErrSlowConsumer) {
		t.Fatalf("first next: %v; want the drop reported", err)
	}
	for _, want := range []string{"a", "b"} {
		a, err := b.next(ctx, time.Time{})
		if err != nil || string(a.m.Data) != want {
			t.Fatalf("next: %v, %v; want %q", a.m, err, want)
		}
	}
	if b.bytes != 0 || len(b.q) != 0 {
		t.Fatalf("%d bytes, %d replies left", b.bytes, len(b.q))
	}

	b.maxMsgs, b.maxBytes = 100, 100
	b.onMsg(&nats.Msg{Data: []byte("on time")})
	b.onMsg(&nats.Msg{Data: []byte("late")})
	by := b.q[0].at
	b.q[1].at = by.Add(time.Nanosecond) // one nanosecond past the bound
	if a, err := b.next(ctx, by); err != nil || string(a.m.Data) != "on time" {
		t.Fatalf("a reply stamped at the bound: %v, %v; want it taken", a.m, err)
	}
	if _, err := b.next(ctx, by); !errors.Is(err, errStalled) {
		t.Fatalf("a reply stamped after the bound: %v; want errStalled", err)
	}
	b.q = nil
	if _, err := b.next(ctx, time.Now().Add(20*time.Millisecond)); !errors.Is(err, errStalled) {
		t.Fatalf("no reply by the bound: %v; want errStalled", err)
	}
	cancel()
	if _, err := b.next(ctx, time.Time{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("ctx ended: %v", err)
	}
}
