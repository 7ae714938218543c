package shim_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// idLog records the operation IDs a handler saw, one entry per run.
type idLog struct {
	mu  sync.Mutex
	ids []string
}

func (l *idLog) add(id string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ids = append(l.ids, id)
	return len(l.ids)
}

func (l *idLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.ids...)
}

func TestAttemptsNoRespondersThenResponder(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	nc := connect(t, s.URL())
	c := shim.NewClient(nc)
	var log idLog
	go func() {
		time.Sleep(150 * time.Millisecond) // the responder comes up later: the first attempts find none
		serve(t, s, "svc", shim.Handler(func(ctx context.Context, _ *nats.Msg) ([]byte, error) {
			log.add(shim.OperationIDFrom(ctx))
			return []byte("ok"), nil
		}))
	}()
	// No operation ID: no responders is not run, so it is sent again.
	reply, err := c.Request(context.Background(), "svc", nil, shim.Attempts(10), shim.Timeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if string(reply.Data) != "ok" {
		t.Fatalf("reply %q", reply.Data)
	}
	if got := log.all(); len(got) != 1 || got[0] != "" {
		t.Fatalf("responder runs: %q, want one without an ID", got)
	}
}

func TestAttemptsTimeoutWithoutOperationID(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	nc := connect(t, s.URL())
	var runs counter
	serve(t, s, "svc", shim.Handler(func(ctx context.Context, _ *nats.Msg) ([]byte, error) {
		runs.inc()
		time.Sleep(time.Second) // past the caller's deadline, whatever its own says
		return nil, nil
	}))
	c := shim.NewClient(nc)
	_, err := c.Request(context.Background(), "svc", nil, shim.Attempts(3), shim.Timeout(600*time.Millisecond))
	var se *shim.Error
	if !errors.As(err, &se) || se.Code != shim.CodeDeadlineExceeded || shim.Classify(err) != shim.OutcomeUnknown || se.Attempts != nil {
		t.Fatalf("want one unknown DEADLINE_EXCEEDED attempt, got %v", err)
	}
	stays(t, 600*time.Millisecond, func() bool { return runs.get() == 1 }, "one run")
}

// With an operation ID, an attempt whose reply has not come within
// AttemptTimeout is sent again; an earlier attempt's late error reply
// does not end the call.
func TestAttemptsTimeoutWithOperationID(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	nc := connect(t, s.URL())
	var log idLog
	serve(t, s, "svc", shim.Handler(func(ctx context.Context, _ *nats.Msg) ([]byte, error) {
		if log.add(shim.OperationIDFrom(ctx)) == 1 {
			time.Sleep(500 * time.Millisecond) // past the attempt's wait
			return nil, errors.New("lost")
		}
		return []byte("done"), nil
	}))
	c := shim.NewClient(nc)
	reply, err := c.Request(context.Background(), "svc", nil, shim.OperationID("op-42"), shim.Attempts(2), shim.AttemptTimeout(200*time.Millisecond), shim.Timeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if string(reply.Data) != "done" {
		t.Fatalf("reply %q", reply.Data)
	}
	if got := log.all(); len(got) != 2 || got[0] != "op-42" || got[1] != "op-42" {
		t.Fatalf("responder saw %q, want op-42 twice", got)
	}
}

// Attempts never fails a call that one attempt completes within the same
// deadline: a healthy responder slower than the attempt's wait answers the
// call with its reply to the first attempt, whatever n is.
func TestAttemptsNeverFailACallOneAttemptCompletes(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	nc := connect(t, s.URL())
	var runs counter
	serve(t, s, "svc", shim.Handler(func(ctx context.Context, _ *nats.Msg) ([]byte, error) {
		runs.inc()
		time.Sleep(100 * time.Millisecond) // slower than the 30 ms attempt wait
		return []byte("ok"), nil
	}))
	c := shim.NewClient(nc)
	for _, n := range []int{2, 200, math.MaxInt} {
		for _, wait := range []time.Duration{0, 30 * time.Millisecond} {
			opts := []shim.CallOption{shim.OperationID("op-slow"), shim.Attempts(n), shim.Timeout(4 * time.Second)}
			if wait > 0 {
				opts = append(opts, shim.AttemptTimeout(wait))
			}
			reply, err := c.Request(context.Background(), "svc", nil, opts...)
			if err != nil || string(reply.Data) != "ok" {
				t.Fatalf("Attempts(%d), AttemptTimeout(%v): %v", n, wait, err)
			}
		}
	}
	if runs.get() < 6 {
		t.Fatalf("%d runs for 6 calls", runs.get())
	}
}

func TestAttemptsRejectionNotResent(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	nc := connect(t, s.URL())
	var runs counter
	serve(t, s, "svc", shim.Handler(func(context.Context, *nats.Msg) ([]byte, error) {
		runs.inc()
		return nil, shim.InvalidArgument("no")
	}))
	c := shim.NewClient(nc)
	_, err := c.Request(context.Background(), "svc", nil, shim.OperationID("op-1"), shim.Attempts(5))
	if shim.Classify(err) != shim.OutcomeRejected {
		t.Fatalf("want a rejection, got %v", err)
	}
	stays(t, 200*time.Millisecond, func() bool { return runs.get() == 1 }, "one run")
}

func TestAttemptsDeadlineBoundsAll(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	nc := connect(t, s.URL())
	c := shim.NewClient(nc)
	const timeout = 400 * time.Millisecond
	start := time.Now()
	_, err := c.Request(context.Background(), "svc", nil, shim.Attempts(1000), shim.Timeout(timeout))
	elapsed := time.Since(start)
	var se *shim.Error
	if !errors.As(err, &se) || !errors.Is(err, nats.ErrNoResponders) || shim.Classify(err) != shim.OutcomeNotRun {
		t.Fatalf("want not run, no responders, got %v", err)
	}
	if elapsed > timeout+time.Second {
		t.Fatalf("attempts took %v, beyond the %v deadline", elapsed, timeout)
	}
	if n := len(se.Attempts); n < 2 || n >= 1000 {
		t.Fatalf("%d attempts in %v", n, elapsed)
	}
	if !strings.Contains(err.Error(), "attempts (1: NO_RESPONDERS, not run; 2: NO_RESPONDERS, not run") {
		t.Fatalf("message does not list the attempts: %v", err)
	}
}

func TestAttemptsMixedOutcomeIsUnknown(t *testing.T) {
	t.Parallel()
	// A timeout (it may have run) and then no responders: the call as a
	// whole may have run.
	s := natstest.Start(t)
	nc := connect(t, s.URL())
	rnc := connect(t, s.URL())
	var runs atomic.Int64
	sub, err := rnc.Subscribe("svc", shim.Handler(func(ctx context.Context, _ *nats.Msg) ([]byte, error) {
		runs.Add(1)
		<-ctx.Done()
		return nil, ctx.Err()
	}))
	if err != nil {
		t.Fatal(err)
	}
	_ = rnc.Flush()
	go func() {
		natstest.Eventually(t, 5*time.Second, func() bool { return runs.Load() == 1 }, "first run")
		_ = sub.Unsubscribe()
		_ = rnc.Flush()
	}()
	c := shim.NewClient(nc)
	_, err = c.Request(context.Background(), "svc", nil, shim.OperationID("op-7"), shim.Attempts(2), shim.AttemptTimeout(300*time.Millisecond), shim.Timeout(3*time.Second))
	var se *shim.Error
	if !errors.As(err, &se) || len(se.Attempts) != 2 || !errors.Is(err, nats.ErrNoResponders) || shim.Classify(err) != shim.OutcomeUnknown {
		t.Fatalf("want 2 attempts, the last no responders, unknown overall; got %v", err)
	}
}

func TestOperationIDValidation(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	nc := connect(t, s.URL())
	var runs counter
	serve(t, s, "svc", shim.Handler(func(context.Context, *nats.Msg) ([]byte, error) { runs.inc(); return nil, nil }))
	c := shim.NewClient(nc)
	for _, id := range []string{"", "has space", "line\nbreak", "tab\t", "é", strings.Repeat("x", shim.MaxOperationIDLen+1)} {
		_, err := c.Request(context.Background(), "svc", nil, shim.OperationID(id))
		var se *shim.Error
		if !errors.As(err, &se) || se.Code != shim.CodeInvalidArgument || se.Sent || !errors.Is(err, shim.ErrInvalidOption) || shim.Classify(err) != shim.OutcomeNotRun {
			t.Fatalf("OperationID(%q): want a local INVALID_ARGUMENT, got %v", id, err)
		}
	}
	for _, n := range []int{0, -1} {
		if _, err := c.Request(context.Background(), "svc", nil, shim.Attempts(n)); !errors.Is(err, shim.ErrInvalidOption) { //natssend:reviewed retry: a table of invalid options, each refused before sending
			t.Fatalf("Attempts(%d): got %v", n, err)
		}
	}
	if _, err := c.Request(context.Background(), "svc", nil, shim.OperationID(strings.Repeat("x", shim.MaxOperationIDLen))); err != nil {
		t.Fatal(err)
	}
	stays(t, 100*time.Millisecond, func() bool { return runs.get() == 1 }, "only the valid call ran")
}

func TestOperationIDCountsInSize(t *testing.T) {
	t.Parallel()
	const limit = 2048
	s := natstest.Start(t, natstest.MaxPayload(limit))
	nc := connect(t, s.URL())
	serve(t, s, "svc", shim.Handler(func(context.Context, *nats.Msg) ([]byte, error) { return []byte("ok"), nil }))
	c := shim.NewClient(nc, shim.WithTimeout(5*time.Second))
	warm(t, c)
	hdr := nats.Header{shim.HeaderTimeout: {"5000"}, shim.HeaderOperationID: {"order-1"}, shim.HeaderMaxPayload: {"2048"}}
	body := limit - shim.HeaderSize(hdr)
	if _, err := c.Request(context.Background(), "svc", make([]byte, body), shim.OperationID("order-1")); err != nil {
		t.Fatalf("exactly at the limit with the ID: %v", err)
	}
	_, err := c.Request(context.Background(), "svc", make([]byte, body+1), shim.OperationID("order-1"))
	var se *shim.Error
	if !errors.As(err, &se) || se.Size != limit+1 || shim.Classify(err) != shim.OutcomeNotRun {
		t.Fatalf("one byte over with the ID: got %v", err)
	}
}

func TestRetry(t *testing.T) {
	t.Parallel()
	notRun := func(context.Context) error {
		return shim.Publish(nil, "s", nil) // INVALID_ARGUMENT: not retried
	}
	var n int
	if err := shim.Retry(context.Background(), func(ctx context.Context) error { n++; return notRun(ctx) }); shim.Classify(err) != shim.OutcomeNotRun || n != 1 {
		t.Fatalf("an invalid argument: %d runs, %v", n, err)
	}

	s := natstest.Start(t)
	nc := connect(t, s.URL())
	c := shim.NewClient(nc)
	var runs counter
	n = 0
	op := func(ctx context.Context) error {
		n++
		if n == 3 {
			serve(t, s, "svc", shim.Handler(func(context.Context, *nats.Msg) ([]byte, error) { runs.inc(); return nil, nil }))
		}
		_, err := c.Request(ctx, "svc", nil)
		return err
	}
	if err := shim.Retry(context.Background(), op, shim.MaxAttempts(5), shim.Backoff(time.Millisecond, 5*time.Millisecond)); err != nil || n != 3 || runs.get() != 1 {
		t.Fatalf("no responders twice, then a responder: %d runs of op, %d of the responder, %v", n, runs.get(), err)
	}

	// Not run every time: bounded by MaxAttempts, the error lists them.
	n = 0
	err := shim.Retry(context.Background(), func(ctx context.Context) error { n++; _, err := c.Request(ctx, "nobody", nil); return err },
		shim.MaxAttempts(3), shim.Backoff(time.Millisecond, 2*time.Millisecond))
	var se *shim.Error
	if !errors.As(err, &se) || len(se.Attempts) != 3 || n != 3 || !errors.Is(err, nats.ErrNoResponders) || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Fatalf("3 not-run runs: %d runs, %v", n, err)
	}

	// Unknown: never run again.
	n = 0
	unknown := errors.New("some failure")
	if err := shim.Retry(context.Background(), func(context.Context) error { n++; return unknown }); !errors.Is(err, unknown) || n != 1 {
		t.Fatalf("unknown outcome: %d runs, %v", n, err)
	}

	// ctx bounds the runs: it ends during a backoff (waits of 2.5 s or
	// more), not during a request, whose outcome would then be unknown (a
	// 10 ms backoff let the 14th request meet the deadline on a loaded
	// machine).
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	err = shim.Retry(ctx, func(ctx context.Context) error { _, err := c.Request(ctx, "nobody", nil); return err },
		shim.MaxAttempts(1000), shim.Backoff(5*time.Second, 5*time.Second))
	if shim.Classify(err) != shim.OutcomeNotRun || time.Since(start) > 2*time.Second {
		t.Fatalf("ctx bound: %v after %v", err, time.Since(start))
	}

	// Invalid options and nil arguments run nothing.
	for _, err := range []error{
		shim.Retry(context.Background(), op, shim.MaxAttempts(0)),
		shim.Retry(context.Background(), op, shim.Backoff(0, time.Second)),
		shim.Retry(context.Background(), op, shim.Backoff(time.Second, time.Millisecond)),
	} {
		if !errors.Is(err, shim.ErrInvalidOption) {
			t.Fatalf("invalid option: %v", err)
		}
	}
	if err := shim.Retry(nil, op); shim.Classify(err) != shim.OutcomeNotRun { //nolint:staticcheck // nil context under test
		t.Fatalf("nil ctx: %v", err)
	}
	if err := shim.Retry(context.Background(), nil); shim.Classify(err) != shim.OutcomeNotRun {
		t.Fatalf("nil op: %v", err)
	}
}

func TestAttemptsConnectionDownBeforeSend(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	nc := connect(t, s.URL(), nats.MaxReconnects(-1))
	var runs counter
	rnc := connect(t, s.URL(), nats.MaxReconnects(-1))
	if _, err := rnc.Subscribe("svc", shim.Handler(func(context.Context, *nats.Msg) ([]byte, error) {
		runs.inc()
		return []byte("ok"), nil
	})); err != nil {
		t.Fatal(err)
	}
	_ = rnc.Flush()
	s.Shutdown()
	natstest.Eventually(t, 5*time.Second, nc.IsReconnecting, "client reconnecting")
	restarted := make(chan struct{})
	go func() {
		defer close(restarted)
		time.Sleep(300 * time.Millisecond) // the server stays down while the call is being sent again
		s.Restart()
	}()
	defer func() { <-restarted }()
	c := shim.NewClient(nc)
	// Without an operation ID: only not-run failures (reconnecting, no
	// responders while the responder resubscribes) are sent again.
	reply, err := c.Request(context.Background(), "svc", nil, shim.Attempts(50), shim.Timeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if string(reply.Data) != "ok" {
		t.Fatalf("reply %q", reply.Data)
	}
	stays(t, 200*time.Millisecond, func() bool { return runs.get() == 1 }, "one run")
}
