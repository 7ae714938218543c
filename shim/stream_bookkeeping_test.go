package shim_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/internal/xfer"
	"github.com/natssend/natssend/shim"
)

// TestStreamDeclaredMaxPayloadFloor: a stream caller that declares a
// max-payload below 1,024 bytes is refused with INVALID_ARGUMENT before
// the handler runs (its frames would carry a few bytes each); one that
// declares exactly 1,024 gets its stream.
func TestStreamDeclaredMaxPayloadFloor(t *testing.T) {
	s := natstest.Start(t)
	var ran atomic.Int64
	serveStream(t, s.URL(), "floor", func(_ context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		ran.Add(1)
		_, err := w.Write([]byte("hello"))
		return err
	})
	raw := rawConn(t, s.URL())
	for _, tc := range []struct {
		declared string
		refused  bool
	}{{"1023", true}, {"1024", false}} {
		inbox := raw.NewInbox()
		sub, err := raw.SubscribeSync(inbox)
		if err != nil {
			t.Fatal(err)
		}
		req := &nats.Msg{Subject: "floor", Reply: inbox, Header: nats.Header{
			natstest.StreamHeader: {natstest.StreamMarker(1<<20, 10*time.Second)},
			shim.HeaderMaxPayload: {tc.declared},
		}}
		before := ran.Load()
		if err := raw.PublishMsg(req); err != nil {
			t.Fatal(err)
		}
		m, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("declared %s: %v", tc.declared, err)
		}
		code := m.Header.Get(shim.HeaderErrorCode)
		switch {
		case tc.refused && code != shim.CodeInvalidArgument:
			t.Errorf("declared max-payload %s: answered %q (%q), want INVALID_ARGUMENT", tc.declared, code, m.Data)
		case !tc.refused && (code != "" || len(m.Data) == 0 || m.Data[0] != xfer.Start):
			t.Errorf("declared max-payload %s: answered %q %q, want the start frame", tc.declared, code, m.Header.Get(shim.HeaderError))
		}
		if m.Reply != "" {
			_ = raw.Publish(m.Reply, xfer.CancelBody(false))
		}
		_ = sub.Unsubscribe()
		if tc.refused && ran.Load() != before {
			t.Errorf("declared max-payload %s: the handler ran", tc.declared)
		}
	}
}

// TestStreamTinyFramesBookkeepingBounded: a handler that flushes every
// byte (a token-by-token stream) to a caller that grants a huge window and
// never acknowledges: the responder's held frames, bookkeeping included,
// stay within DefaultStreamWindow (its heap grew by about 150 bytes per
// one-byte frame when only payload bytes were counted), and its Write
// waits there.
func TestStreamTinyFramesBookkeepingBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("a million messages")
	}
	s := natstest.Start(t)
	const window, total = 256 << 20, 1 << 20
	var written atomic.Int64
	handlerDone := make(chan struct{})
	serveStream(t, s.URL(), "tinyheld", func(ctx context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		defer close(handlerDone)
		b := []byte{'x'}
		for written.Load() < total {
			if _, err := w.Write(b); err != nil {
				return err
			}
			if err := w.Flush(); err != nil {
				return err
			}
			written.Add(1)
		}
		return nil
	})
	raw := rawConn(t, s.URL())
	inbox := raw.NewInbox()
	var granted atomic.Bool
	var frames atomic.Int64
	ctrl := make(chan string, 1)
	sub, err := raw.Subscribe(inbox, func(m *nats.Msg) {
		frames.Add(1)
		if granted.CompareAndSwap(false, true) {
			ctrl <- m.Reply
			_ = raw.Publish(m.Reply, xfer.AckBody(0, window, false)) // the whole window, nothing acknowledged
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = sub.SetPendingLimits(-1, -1)
	defer func() { _ = sub.Unsubscribe() }()
	base := natstest.HeapAfterGC()
	if err := raw.PublishMsg(&nats.Msg{Subject: "tinyheld", Reply: inbox, Header: nats.Header{natstest.StreamHeader: {natstest.StreamMarker(window, 60*time.Second)}}}); err != nil {
		t.Fatal(err)
	}
	// Wait until the handler stops advancing (or finishes).
	last := int64(-1)
	natstest.Eventually(t, 120*time.Second, func() bool {
		time.Sleep(500 * time.Millisecond)
		w := written.Load()
		stalled := w == last
		last = w
		return stalled || w >= total
	}, "the handler to stop writing")
	g := natstest.Growth(natstest.HeapAfterGC(), base)
	t.Logf("wrote %d one-byte frames, caller got %d; heap grew %d", written.Load(), frames.Load(), g)
	if g > shim.DefaultStreamWindow+slack {
		t.Errorf("one-byte frames, nothing acknowledged: the heap grew by %d bytes, above DefaultStreamWindow (%d) and slack", g, shim.DefaultStreamWindow)
	}
	if written.Load() >= total {
		t.Errorf("the handler wrote all %d one-byte frames with nothing acknowledged", total)
	}
	// End the stream now, so that its held frames are gone before the
	// next test measures its own heap.
	if err := raw.Publish(<-ctrl, xfer.CancelBody(false)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-handlerDone:
	case <-time.After(30 * time.Second):
		t.Fatal("the handler did not end after the cancel")
	}
}
