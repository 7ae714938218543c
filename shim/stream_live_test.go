package shim_test

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// endless is a StreamHandlerFunc that writes 1 KiB chunks (flushed) until
// Write fails, recording the error, the context's cause and when.
type endless struct {
	err   atomic.Pointer[error]
	cause atomic.Pointer[error]
	at    atomic.Int64
	every time.Duration
}

func (e *endless) handle(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
	chunk := make([]byte, 1024)
	for {
		if _, err := w.Write(chunk); err != nil {
			e.at.Store(time.Now().UnixNano())
			e.err.Store(&err)
			cause := context.Cause(ctx)
			e.cause.Store(&cause)
			return err
		}
		if e.every > 0 {
			if err := w.Flush(); err != nil {
				continue
			}
			time.Sleep(e.every)
		}
	}
}

func (e *endless) ended() bool { return e.err.Load() != nil }

func TestStreamCloseCancelsResponder(t *testing.T) {
	s := natstest.Start(t, natstest.MaxPayload(16<<10))
	var e endless
	serveStream(t, s.URL(), "endless", e.handle)
	c := shim.NewClient(connect(t, s.URL()))
	rs, err := c.RequestStream(context.Background(), "endless", nil, shim.StreamWindow(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(rs, make([]byte, 200<<10)); err != nil {
		t.Fatal(err)
	}
	closed := time.Now()
	if err := rs.Close(); err != nil {
		t.Fatal(err)
	}
	natstest.Eventually(t, 10*time.Second, e.ended, "the responder's Write to fail")
	if d := time.Duration(e.at.Load() - closed.UnixNano()); d > 3*time.Second {
		t.Errorf("the responder noticed the Close after %v", d)
	}
	if cause := *e.cause.Load(); !errors.Is(cause, shim.ErrStreamCanceled) {
		t.Errorf("cause %v", cause)
	}
	if err := *e.err.Load(); shim.Classify(err) != shim.OutcomeUnknown || !errors.Is(err, context.Canceled) {
		t.Errorf("Write error %v", err)
	}
	if _, err := rs.Read(make([]byte, 1)); !errors.Is(err, shim.ErrStreamClosed) {
		t.Errorf("Read after Close: %v", err)
	}
}

func TestStreamDeadline(t *testing.T) {
	s := natstest.Start(t)
	e := endless{every: 20 * time.Millisecond}
	serveStream(t, s.URL(), "ticker", e.handle)
	c := shim.NewClient(connect(t, s.URL()))
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	rs, err := c.RequestStream(ctx, "ticker", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	n, err := io.Copy(io.Discard, rs)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, io.ErrUnexpectedEOF) || shim.Classify(err) != shim.OutcomeUnknown {
		t.Fatalf("after %d bytes: %v", n, err)
	}
	if n == 0 {
		t.Error("nothing read before the deadline")
	}
	if _, err := rs.Read(make([]byte, 1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Read after the deadline: %v", err)
	}
	natstest.Eventually(t, 5*time.Second, e.ended, "the responder's Write to fail after the caller's deadline")
}

func TestStreamDeadResponder(t *testing.T) {
	s := natstest.Start(t)
	e := endless{every: 10 * time.Millisecond}
	rnc := serveStream(t, s.URL(), "dying", e.handle)
	c := shim.NewClient(connect(t, s.URL()))
	rs, err := c.RequestStream(context.Background(), "dying", nil, shim.StreamIdle(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	if _, err := io.ReadFull(rs, make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	rnc.Close() // the responder's process is gone
	gone := time.Now()
	_, err = io.Copy(io.Discard, rs)
	if !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(err, shim.ErrStreamIdle) || shim.Classify(err) != shim.OutcomeUnknown {
		t.Fatalf("%v", err)
	}
	if d := time.Since(gone); d > 3*time.Second {
		t.Errorf("dead responder detected after %v (idle bound 500ms)", d)
	}
}

func TestStreamDeadCaller(t *testing.T) {
	s := natstest.Start(t)
	e := endless{every: 10 * time.Millisecond}
	serveStream(t, s.URL(), "orphan", e.handle)
	cnc := connect(t, s.URL())
	c := shim.NewClient(cnc)
	rs, err := c.RequestStream(context.Background(), "orphan", nil, shim.StreamIdle(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(rs, make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	cnc.Close() // the caller's process is gone: no Close, no cancel message
	natstest.Eventually(t, 5*time.Second, e.ended, "the responder to notice the caller is gone")
	if cause := *e.cause.Load(); !errors.Is(cause, shim.ErrCallerGone) {
		t.Errorf("cause %v", cause)
	}
	_ = rs.Close()
}

func TestStreamSlowProducerStaysAlive(t *testing.T) {
	s := natstest.Start(t)
	serveStream(t, s.URL(), "slowpoke", func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
		for i := range 2 {
			if _, err := w.Write([]byte{byte('a' + i)}); err != nil {
				return err
			}
			if err := w.Flush(); err != nil {
				return err
			}
			time.Sleep(2 * time.Second) // longer than the idle bound: heartbeats fill the gap
		}
		return nil
	})
	c := shim.NewClient(connect(t, s.URL()))
	rs, err := c.RequestStream(context.Background(), "slowpoke", nil, shim.StreamIdle(1500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(t, rs); string(got) != "ab" || err != nil {
		t.Fatalf("%q, %v", got, err)
	}
}

// fakeResponder answers stream requests on subject by speaking the frame
// protocol itself, as a responder before HighwayHash digests: a start
// frame, body as one data frame, and an end frame whose length and
// SHA-256 are those of claimed (digestResponder).
func fakeResponder(t *testing.T, url, subject string, body, claimed []byte) {
	t.Helper()
	digestResponder(t, url, subject, nil, body, claimed)
}

func TestStreamNeverEOFWithWrongBytes(t *testing.T) {
	s := natstest.Start(t)
	fakeResponder(t, s.URL(), "corrupt", []byte("hello world"), []byte("hello there"))
	fakeResponder(t, s.URL(), "short", []byte("hello"), []byte("hello world"))
	fakeResponder(t, s.URL(), "honest", []byte("hello world"), []byte("hello world"))
	c := shim.NewClient(connect(t, s.URL()))
	for subject, target := range map[string]error{"corrupt": shim.ErrStreamCorrupt, "short": io.ErrUnexpectedEOF} {
		rs, err := c.RequestStream(context.Background(), subject, nil, shim.StreamIdle(300*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		_, err = readAll(t, rs)
		if !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(err, target) || shim.Classify(err) != shim.OutcomeUnknown {
			t.Errorf("%s: %v", subject, err)
		}
	}
	rs, err := c.RequestStream(context.Background(), "honest", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(t, rs); string(got) != "hello world" || err != nil {
		t.Errorf("honest: %q, %v", got, err)
	}
}
