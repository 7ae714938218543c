package shim_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// TestStreamReadAfterCtxEndOnEndedStream: a stream whose end frame has
// arrived (every byte queued) but is not read out yet, then ctx ends:
// Read returns ctx's error (ctx bounds the whole stream) and does not
// spin.
func TestStreamReadAfterCtxEndOnEndedStream(t *testing.T) {
	s := natstest.Start(t)
	body := []byte("hello world")
	serveStream(t, s.URL(), "adv.ended", writeAll(body, len(body)))
	c := shim.NewClient(connect(t, s.URL()))
	ctx, cancel := context.WithCancel(context.Background())
	rs, err := c.RequestStream(ctx, "adv.ended", nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the end frame has arrived by now
	cancel()
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(rs)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("ReadAll after cancel: %v, want context.Canceled", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Read after ctx cancel on a stream whose end frame already arrived does not return (spins holding r.mu)")
	}
}

// TestStreamCopyPastDeadlineOnEndedStream: the same with a deadline that
// passes while the fully received body is still being copied out with
// io.Copy (WriteTo): a consumer slower than the stream.
func TestStreamCopyPastDeadlineOnEndedStream(t *testing.T) {
	s := natstest.Start(t)
	body := payload(200_000, 3)
	serveStream(t, s.URL(), "adv.ended2", func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
		for off := 0; off < len(body); off += 10_000 {
			if _, err := w.Write(body[off:min(off+10_000, len(body))]); err != nil {
				return err
			}
			if err := w.Flush(); err != nil {
				return err
			}
		}
		return nil
	})
	c := shim.NewClient(connect(t, s.URL()))
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	rs, err := c.RequestStream(ctx, "adv.ended2", nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(slowWriter{d: 200 * time.Millisecond}, rs)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("io.Copy past the deadline: %v, want context.DeadlineExceeded", err)
		}
	case <-time.After(5 * time.Second):
		closed := make(chan struct{})
		go func() { rs.Close(); close(closed) }()
		select {
		case <-closed:
			t.Fatal("io.Copy past the deadline on an ended stream did not return")
		case <-time.After(time.Second):
			t.Fatal("io.Copy past the deadline on an ended stream did not return, and Close from another goroutine blocks too")
		}
	}
}

type slowWriter struct{ d time.Duration }

func (w slowWriter) Write(p []byte) (int, error) { time.Sleep(w.d); return len(p), nil }

// TestStreamResponderLearnsCallerGaveUpBeforeFirstFrame: the caller gives
// up waiting for the first frame (its Timeout) and its ctx has no
// deadline, so the responder gets no HeaderTimeout; the responder's
// context still ends (ErrCallerGone) once that wait is over, while it
// works before its first write.
func TestStreamResponderLearnsCallerGaveUpBeforeFirstFrame(t *testing.T) {
	s := natstest.Start(t)
	ended := make(chan error, 1)
	serveStream(t, s.URL(), "adv.pre", func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
		select {
		case <-ctx.Done():
			ended <- context.Cause(ctx)
		case <-time.After(10 * time.Second):
			ended <- nil
		}
		return nil
	})
	c := shim.NewClient(connect(t, s.URL()))
	_, err := c.RequestStream(context.Background(), "adv.pre", nil, shim.Timeout(300*time.Millisecond), shim.StreamIdle(500*time.Millisecond))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("RequestStream: %v, want its first-frame wait's deadline", err)
	}
	select {
	case cause := <-ended:
		if cause == nil {
			t.Fatal("the responder's context did not end in 10 s, though the caller gave up at 300 ms with a 500 ms idle bound")
		}
		if !errors.Is(cause, shim.ErrCallerGone) {
			t.Errorf("the responder's context ended with %v, want ErrCallerGone", cause)
		}
	case <-time.After(12 * time.Second):
		t.Fatal("no result")
	}
}
