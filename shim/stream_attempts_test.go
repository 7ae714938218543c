package shim_test

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// TestStreamAttemptsSlowResponderAnswers: "Attempts never fails a call
// that one attempt would have completed within the same deadline", for
// RequestStream too: a responder slower than AttemptTimeout still answers
// the call with its first attempt's stream.
func TestStreamAttemptsSlowResponderAnswers(t *testing.T) {
	s := natstest.Start(t)
	var calls, starts atomic.Int32
	nc := connect(t, s.URL())
	fn := func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
		calls.Add(1)
		select {
		case <-time.After(2500 * time.Millisecond): // slower than AttemptTimeout (2 s)
		case <-ctx.Done():
			return ctx.Err()
		}
		starts.Add(1)
		_, err := w.Write([]byte("result"))
		return err
	}
	if _, err := nc.QueueSubscribe("adv.slow", "q", shim.StreamHandler(fn, shim.Conn(nc))); err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
	c := shim.NewClient(connect(t, s.URL()))

	// One attempt: completes after about 2.5 s.
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Second)
	defer cancel()
	t0 := time.Now()
	rs, err := c.RequestStream(ctx, "adv.slow", nil, shim.Timeout(9*time.Second), shim.OperationID("op-1"))
	if err != nil {
		t.Fatalf("single attempt: %v", err)
	}
	if b, err := io.ReadAll(rs); err != nil || string(b) != "result" {
		t.Fatalf("single attempt: %q, %v after %v", b, err, time.Since(t0))
	}
	rs.Close()
	time.Sleep(500 * time.Millisecond)

	// The same call with Attempts(3) and the same deadline.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 9*time.Second)
	defer cancel2()
	t0 = time.Now()
	rs, err = c.RequestStream(ctx2, "adv.slow", nil, shim.Timeout(9*time.Second), shim.OperationID("op-2"), shim.Attempts(3))
	if err != nil {
		t.Fatalf("Attempts(3) failed a call one attempt completes in 2.5s, after %v: %v (handler ran %d times)", time.Since(t0), err, calls.Load())
	}
	if b, err := io.ReadAll(rs); err != nil || string(b) != "result" {
		t.Fatalf("Attempts(3): %q, %v after %v", b, err, time.Since(t0))
	}
	rs.Close()
}

// TestStreamAttemptsStoreRequestOnce: "A claim-checked request is stored
// once per call, sent as the same reference by every attempt, and deleted
// once when the call ends" (Attempts), for RequestStream too; and the
// first attempt's stream, slower than AttemptTimeout, answers the call.
func TestStreamAttemptsStoreRequestOnce(t *testing.T) {
	e := newOverflowEnv(t)
	var calls atomic.Int32
	serveStreamOn(t, e.rnc, "svc", func(ctx context.Context, m *nats.Msg, w *shim.StreamWriter) error {
		if calls.Add(1) == 1 {
			time.Sleep(2500 * time.Millisecond)
		}
		_, err := w.Write([]byte("ok"))
		return err
	}, shim.ServeClaimChecks(e.rst))
	var metas atomic.Int32
	tap := connect(t, e.s.URL())
	_, _ = tap.Subscribe("$O."+claimcheck.DefaultBucket+".M.>", func(m *nats.Msg) {
		if len(m.Data) > 0 {
			metas.Add(1)
		}
	})
	_ = tap.Flush()
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	rs, err := c.RequestStream(ctx, "svc", payload(300<<10, 1), shim.OperationID("op"), shim.Attempts(3))
	if err != nil {
		t.Fatalf("call: %v (handler ran %d times)", err, calls.Load())
	}
	if b, err := io.ReadAll(rs); err != nil || string(b) != "ok" {
		t.Fatalf("read: %q, %v", b, err)
	}
	rs.Close()
	natstest.Eventually(t, 10*time.Second, func() bool { return e.stored(t) == 0 }, "the request's payload deleted")
	if metas.Load() != 1 {
		t.Errorf("the claim-checked request was stored %d times in one call, want once", metas.Load())
	}
}
