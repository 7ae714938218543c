package shim_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

func TestStreamErrorBeforeFirstWrite(t *testing.T) {
	s := natstest.Start(t)
	var ran atomic.Int64
	serveStream(t, s.URL(), "reject", func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
		ran.Add(1)
		return shim.InvalidArgument("bad range %q", req.Data)
	})
	serveStream(t, s.URL(), "fail", func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
		return errors.New("disk on fire")
	})
	serveStream(t, s.URL(), "code", func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
		return &shim.Error{Code: "409", Message: "busy"}
	})
	serveStream(t, s.URL(), "panic", func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
		panic("boom")
	})
	c := shim.NewClient(connect(t, s.URL()))
	for _, tc := range []struct {
		subject, code string
		outcome       shim.Outcome
	}{
		{"reject", shim.CodeInvalidArgument, shim.OutcomeRejected},
		{"fail", shim.CodeInternal, shim.OutcomeUnknown},
		{"code", "409", shim.OutcomeRejected},
		{"panic", shim.CodeInternal, shim.OutcomeUnknown},
	} {
		rs, err := c.RequestStream(context.Background(), tc.subject, []byte("x"))
		var e *shim.Error
		if rs != nil || !errors.As(err, &e) || !e.Remote || e.Code != tc.code || shim.Classify(err) != tc.outcome {
			t.Errorf("%s: %v, %v (want remote %s, %v)", tc.subject, rs, err, tc.code, tc.outcome)
		}
	}
	if ran.Load() != 1 {
		t.Errorf("handler ran %d times, want 1 (sent once)", ran.Load())
	}
}

func TestStreamErrorMidStream(t *testing.T) {
	s := natstest.Start(t, natstest.MaxPayload(4096))
	body := payload(10_000, 1)
	var panics atomic.Int64
	onErr := shim.OnError(func(_ *nats.Msg, err error) {
		if strings.Contains(err.Error(), "panic: boom") {
			panics.Add(1)
		}
	})
	for subject, fail := range map[string]func() error{
		"reject": func() error { return shim.Reject("OUT_OF_RANGE", "past the end") },
		"plain":  func() error { return fmt.Errorf("lost the disk") },
		"panic":  func() error { panic("boom") },
	} {
		serveStream(t, s.URL(), subject, func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
			if _, err := w.Write(body); err != nil {
				return err
			}
			return fail()
		}, onErr)
	}
	c := shim.NewClient(connect(t, s.URL()))
	for _, tc := range []struct {
		subject, code, msg string
		outcome            shim.Outcome
	}{
		{"reject", "OUT_OF_RANGE", "past the end", shim.OutcomeRejected},
		{"plain", shim.CodeInternal, "lost the disk", shim.OutcomeUnknown},
		{"panic", shim.CodeInternal, "internal error", shim.OutcomeUnknown},
	} {
		rs, err := c.RequestStream(context.Background(), tc.subject, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.subject, err)
		}
		got, err := readAll(t, rs)
		var e *shim.Error
		if !errors.As(err, &e) || e.Code != tc.code || e.Message != tc.msg || shim.Classify(err) != tc.outcome {
			t.Errorf("%s: %v (want %s %q, %v)", tc.subject, err, tc.code, tc.msg, tc.outcome)
		}
		if string(got) != string(body) {
			t.Errorf("%s: %d bytes before the error, want %d", tc.subject, len(got), len(body))
		}
	}
	if panics.Load() != 1 {
		t.Errorf("OnError saw %d panics, want 1", panics.Load())
	}
}

func TestStreamNoResponders(t *testing.T) {
	s := natstest.Start(t)
	c := shim.NewClient(connect(t, s.URL()))
	start := time.Now()
	rs, err := c.RequestStream(context.Background(), "nobody", nil, shim.Timeout(5*time.Second))
	if rs != nil || !errors.Is(err, nats.ErrNoResponders) || shim.Classify(err) != shim.OutcomeNotRun {
		t.Fatalf("%v, %v", rs, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("no responders took %v", d)
	}
	// With Attempts, not-run is sent again, and each send is told no responders.
	_, err = c.RequestStream(context.Background(), "nobody", nil, shim.Attempts(3))
	var e *shim.Error
	if !errors.As(err, &e) || len(e.Attempts) != 3 || shim.Classify(err) != shim.OutcomeNotRun {
		t.Fatalf("attempts: %v", err)
	}
}

func TestStreamFirstFrameTimeout(t *testing.T) {
	s := natstest.Start(t)
	release := make(chan struct{})
	var cause atomic.Value
	serveStream(t, s.URL(), "slow", func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
		<-release
		_, err := w.Write([]byte("late"))
		cause.Store(fmt.Sprint(err))
		return err
	})
	c := shim.NewClient(connect(t, s.URL()))
	rs, err := c.RequestStream(context.Background(), "slow", nil, shim.Timeout(200*time.Millisecond))
	if rs != nil || !errors.Is(err, context.DeadlineExceeded) || shim.Classify(err) != shim.OutcomeUnknown {
		t.Fatalf("%v, %v", rs, err)
	}
	close(release)
	// The late first frame finds no inbox: the responder learns the caller is gone.
	natstest.Eventually(t, 15*time.Second, func() bool { return cause.Load() != nil }, "the late handler's write to end")
}

func TestStreamBadInput(t *testing.T) {
	s := natstest.Start(t)
	nc := connect(t, s.URL())
	c := shim.NewClient(nc)
	ctx := context.Background()
	var reported atomic.Int64
	onErr := shim.OnError(func(*nats.Msg, error) { reported.Add(1) })
	rnc := connect(t, s.URL())
	for subject, h := range map[string]nats.MsgHandler{
		"nilfn":  shim.StreamHandler(nil, shim.Conn(rnc), onErr),
		"noconn": shim.StreamHandler(func(context.Context, *nats.Msg, *shim.StreamWriter) error { return nil }, onErr),
	} {
		if _, err := rnc.Subscribe(subject, h); err != nil {
			t.Fatal(err)
		}
	}
	_ = rnc.Flush()
	var kept atomic.Pointer[shim.StreamWriter]
	serveStream(t, s.URL(), "stream", func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
		kept.Store(w)
		_, err := w.Write([]byte("ok"))
		return err
	})
	if _, err := nc.Subscribe("plain", shim.Handler(func(context.Context, *nats.Msg) ([]byte, error) { return []byte("hi"), nil })); err != nil {
		t.Fatal(err)
	}
	// The first Request makes nats.go's persistent reply subscription.
	if _, err := c.Request(ctx, "plain", nil); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()

	check := func(what string, rs *shim.ReplyStream, err error, target error) {
		t.Helper()
		var e *shim.Error
		if rs != nil || !errors.As(err, &e) || !errors.Is(err, target) || shim.Classify(err) != shim.OutcomeNotRun {
			t.Errorf("%s: %v, %v", what, rs, err)
		}
	}
	rs, err := c.RequestStream(nil, "a", nil) //nolint:staticcheck // a nil context on purpose
	check("nil ctx", rs, err, nats.ErrInvalidContext)
	rs, err = c.RequestMsgStream(ctx, nil)
	check("nil msg", rs, err, nats.ErrInvalidMsg)
	rs, err = c.RequestStream(ctx, "a b", nil)
	check("bad subject", rs, err, nats.ErrBadSubject)
	rs, err = c.RequestStream(ctx, "a", nil, shim.StreamWindow(0))
	check("window", rs, err, shim.ErrInvalidOption)
	rs, err = c.RequestStream(ctx, "a", nil, shim.StreamIdle(time.Millisecond))
	check("idle", rs, err, shim.ErrInvalidOption)
	rs, err = (*shim.Client)(nil).RequestStream(ctx, "a", nil)
	check("nil client", rs, err, nats.ErrInvalidConnection)
	var nilRS *shim.ReplyStream
	if _, err := nilRS.Read(nil); !errors.Is(err, shim.ErrStreamClosed) || nilRS.Close() != nil || nilRS.Header() != nil {
		t.Errorf("nil ReplyStream: %v", err)
	}
	var nilW *shim.StreamWriter
	if _, err := nilW.Write([]byte("x")); !errors.Is(err, shim.ErrStreamClosed) || !errors.Is(nilW.Flush(), shim.ErrStreamClosed) {
		t.Errorf("nil StreamWriter: %v", err)
	}

	// Misconfigured handlers answer with an error reply and do not run.
	for _, subject := range []string{"nilfn", "noconn"} {
		_, err := c.RequestStream(ctx, subject, nil)
		var e *shim.Error
		if !errors.As(err, &e) || e.Code != shim.CodeInternal || !strings.Contains(e.Message, "misconfigured") {
			t.Errorf("%s: %v", subject, err)
		}
	}
	if reported.Load() < 2 {
		t.Errorf("OnError saw %d errors", reported.Load())
	}

	// A plain request to a stream handler is rejected; a stream request
	// to a plain handler fails without hanging.
	if _, err := c.Request(ctx, "stream", nil); shim.Classify(err) != shim.OutcomeRejected {
		t.Errorf("plain request to a stream handler: %v", err)
	}
	if _, err := c.RequestStream(ctx, "plain", nil); err == nil || shim.Classify(err) != shim.OutcomeUnknown {
		t.Errorf("stream request to a plain handler: %v", err)
	}
	rs, err = c.RequestStream(ctx, "stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(t, rs); string(got) != "ok" || err != nil {
		t.Fatalf("%q, %v", got, err)
	}
	if _, err := kept.Load().Write([]byte("late")); !errors.Is(err, shim.ErrStreamClosed) {
		t.Errorf("Write after return: %v", err)
	}
	if err := kept.Load().Flush(); !errors.Is(err, shim.ErrStreamClosed) {
		t.Errorf("Flush after return: %v", err)
	}
	if _, err := io.ReadAll(rs); !errors.Is(err, shim.ErrStreamClosed) {
		t.Errorf("Read after Close: %v", err)
	}
	// Everything started by these calls has ended.
	settle(t, before)
}

func TestStreamTwoRespondersOneWins(t *testing.T) {
	s := natstest.Start(t)
	var ended atomic.Int64
	var causes atomic.Value
	for range 2 {
		serveStream(t, s.URL(), "twice", func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
			defer ended.Add(1)
			for i := 0; i < 200; i++ {
				if _, err := w.Write([]byte("0123456789")); err != nil {
					causes.Store(context.Cause(ctx))
					return err
				}
				if err := w.Flush(); err != nil {
					causes.Store(context.Cause(ctx))
					return err
				}
				time.Sleep(5 * time.Millisecond)
			}
			return nil
		})
	}
	c := shim.NewClient(connect(t, s.URL()))
	rs, err := c.RequestStream(context.Background(), "twice", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, rs)
	if err != nil || len(got) != 2000 || strings.Trim(string(got), "0123456789") != "" {
		t.Fatalf("%d bytes, %v", len(got), err)
	}
	// The responder that lost the race was told to stop.
	natstest.Eventually(t, 10*time.Second, func() bool { return ended.Load() == 2 }, "both handlers to end")
	if cause, _ := causes.Load().(error); !errors.Is(cause, shim.ErrStreamCanceled) {
		t.Errorf("the second responder's cause: %v", cause)
	}
}
