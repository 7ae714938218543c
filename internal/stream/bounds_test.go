package stream

import (
	"context"
	"crypto/rand"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/internal/xfer"
)

// A responder that sent its start frame and then nothing, not even a
// heartbeat, for the idle bound: the caller gives the stream up
// (ErrIdle).
func TestCallerIdleBound(t *testing.T) {
	p := newPair(t, 256<<10, 200*time.Millisecond)
	// A silent responder: one start frame, by hand.
	if err := p.rnc.PublishMsg(&nats.Msg{Subject: p.inbox, Reply: p.rnc.NewInbox(), Data: xfer.Frame(xfer.Start, 0, []byte{Version})}); err != nil { //natssend:reviewed a test peer's raw control message
		t.Fatal(err)
	}
	p.open()
	_, err := io.ReadAll(p.r)
	broken(t, err, ErrIdle)
}

// A caller that never acknowledges anything: the responder sends
// heartbeats meanwhile (every idle/5) and gives the stream up after the
// idle bound (ErrCallerGone).
func TestResponderIdleBound(t *testing.T) {
	srv := natstest.Start(t)
	cnc, rnc := connect(t, srv.URL()), connect(t, srv.URL())
	inbox := cnc.NewInbox()
	var beats atomic.Int64
	if _, err := cnc.Subscribe(inbox, func(m *nats.Msg) {
		if kind, _, _, ok := xfer.ParseFrame(m.Data); ok && kind == xfer.Heartbeat {
			beats.Add(1)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := cnc.Flush(); err != nil {
		t.Fatal(err)
	}
	const idle = 300 * time.Millisecond
	sr, _ := ParseMarker(Marker(256<<10, idle, 0))
	s := NewSender(context.Background(), connlimit.For(rnc), inbox, rnc.NewInbox()+"."+rand.Text(), sr, 0)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Context().Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the responder did not give the silent caller up")
	}
	if cause := context.Cause(s.Context()); cause != ErrCallerGone {
		t.Fatalf("the responder's context ended with %v; want ErrCallerGone", cause)
	}
	if beats.Load() == 0 {
		t.Fatal("no heartbeat while the caller was silent")
	}
	_ = s.Finish(nil, func(string, string, bool) error { return nil })
}

// The responder holds at most maxHeld of unacknowledged frames, each
// counting heldFrameCost beyond its payload: a writer of 1-byte frames
// to a caller that grants credit and never acknowledges stops at exactly
// the frame that reaches the bound, not after maxHeld frames, and goes on
// once the caller acknowledges.
func TestHeldFramesBound(t *testing.T) {
	srv := natstest.Start(t)
	cnc, rnc := connect(t, srv.URL()), connect(t, srv.URL())
	inbox := cnc.NewInbox()
	ctrl := make(chan string, 1)
	if _, err := cnc.Subscribe(inbox, func(m *nats.Msg) {
		if kind, _, _, ok := xfer.ParseFrame(m.Data); ok && kind == xfer.Start {
			ctrl <- m.Reply
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := cnc.Flush(); err != nil {
		t.Fatal(err)
	}
	const window = 1 << 20 // all of it credit from the start
	sr, _ := ParseMarker(Marker(window, 10*time.Second, 0))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := NewSender(ctx, connlimit.For(rnc), inbox, rnc.NewInbox()+"."+rand.Text(), sr, 0)
	s.maxHeld = 64 << 10
	// Frame n+1 goes while maxHeld - n*(1+heldFrameCost) >= 1 byte.
	want := (s.maxHeld-1)/(1+heldFrameCost) + 1
	const writes = 1000
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range writes {
			if _, err := s.Write([]byte{'x'}); err != nil {
				return
			}
			if err := s.Flush(); err != nil {
				return
			}
		}
	}()
	held := func() (sent int64, frames int) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.sent, len(s.frames)
	}
	natstest.Eventually(t, 30*time.Second, func() bool { sent, _ := held(); return sent >= want }, "the frames up to the bound")
	time.Sleep(100 * time.Millisecond) // a writer past the bound would go on
	if sent, frames := held(); sent != want || frames != int(want) {
		t.Fatalf("%d bytes in %d frames held; want exactly %d of 1 byte (bound %d, %d a frame)", sent, frames, want, s.maxHeld, heldFrameCost)
	}
	c := <-ctrl
	if err := cnc.Publish(c, xfer.AckBody(want, want+window, false)); err != nil { //natssend:reviewed a test peer's raw control message
		t.Fatal(err)
	}
	natstest.Eventually(t, 30*time.Second, func() bool { sent, _ := held(); return sent > want }, "the writer going on after the acknowledgement")
	cancel()
	<-done
	_ = s.Finish(nil, func(string, string, bool) error { return nil })
}
