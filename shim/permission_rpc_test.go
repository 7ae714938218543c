package shim_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// deniedWithin checks that err is PERMISSION_DENIED naming subject, with
// outcome want, errors.Is nats.ErrPermissionViolation, and that it came
// well before the call's 10 s deadline.
func deniedWithin(t *testing.T, err error, took time.Duration, subject string, want shim.Outcome) {
	t.Helper()
	d := shim.Describe(err)
	if d == nil || d.Code != shim.CodePermissionDenied || shim.Classify(err) != want ||
		!errors.Is(err, nats.ErrPermissionViolation) || !strings.Contains(err.Error(), subject) {
		t.Errorf("got %v (%v); want PERMISSION_DENIED, %v, naming %q", err, shim.Classify(err), want, subject)
	}
	if took > 3*time.Second {
		t.Errorf("the error came after %v: the watch did not end the wait (the deadline is 10 s)", took)
	}
}

// TestRequestPermissionDenied: a request the server drops (the caller may
// not publish to the subject) ends with PERMISSION_DENIED, not run, within
// a round trip of the server's report and not at the deadline: Request,
// Attempts, RequestMany and RequestStream alike; the responder never runs.
func TestRequestPermissionDenied(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t,
		natstest.WithUser(natstest.User{Name: "caller", Password: "p", Publish: []string{"svc.ok"}, Subscribe: []string{"_INBOX.>"}}))
	var ran atomic.Int64
	srv := connect(t, s.URL())
	for _, subj := range []string{"svc.ok", "svc.no"} {
		if _, err := shim.Serve(srv, subj, shim.Unary(func(context.Context, *nats.Msg) ([]byte, error) {
			ran.Add(1)
			return []byte("ok"), nil
		})); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := shim.Serve(srv, "svc.stream.no", shim.Stream(func(_ context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		ran.Add(1)
		_, err := w.Write([]byte("frame"))
		return err
	})); err != nil {
		t.Fatal(err)
	}
	if err := srv.Flush(); err != nil {
		t.Fatal(err)
	}
	c := shim.NewClient(connect(t, s.UserURL("caller")), shim.WithTimeout(10*time.Second))
	ctx := context.Background()

	if _, err := c.Request(ctx, "svc.ok", []byte("x")); err != nil {
		t.Fatalf("an allowed request: %v", err)
	}
	ran.Store(0)
	for range 3 { // every time, not only the first
		t0 := time.Now()
		_, err := c.Request(ctx, "svc.no", []byte("x"))
		deniedWithin(t, err, time.Since(t0), "svc.no", shim.OutcomeNotRun)

		t0 = time.Now()
		_, err = c.Request(ctx, "svc.no", []byte("x"), shim.Attempts(3), shim.OperationID("op-1"))
		deniedWithin(t, err, time.Since(t0), "svc.no", shim.OutcomeNotRun)

		t0 = time.Now()
		var errs []error
		for m, err := range c.RequestMany(ctx, "svc.no", []byte("x")) {
			if m != nil {
				t.Errorf("RequestMany yielded a reply %q", m.Data)
			}
			errs = append(errs, err)
		}
		if len(errs) != 1 {
			t.Fatalf("RequestMany yielded %d errors, want 1: %v", len(errs), errs)
		}
		deniedWithin(t, errs[0], time.Since(t0), "svc.no", shim.OutcomeNotRun)

		t0 = time.Now()
		rs, err := c.RequestStream(ctx, "svc.stream.no", []byte("x"))
		if rs != nil {
			_ = rs.Close()
		}
		deniedWithin(t, err, time.Since(t0), "svc.stream.no", shim.OutcomeNotRun)
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("the responder ran %d times for requests the server dropped", n)
	}
	if _, err := c.Request(ctx, "svc.ok", []byte("x")); err != nil {
		t.Errorf("an allowed request after the denials: %v", err)
	}
}

// TestRequestInboxDenied: a caller that may not subscribe to its inbox
// gets no reply. The first request learns it from the server within a
// round trip (PERMISSION_DENIED, and it may have run: nats.go subscribes
// and sends the request together); every later request is refused before
// it is sent (not run, and the responder does not get it), not left to
// its deadline.
func TestRequestInboxDenied(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t,
		natstest.WithUser(natstest.User{Name: "noinbox", Password: "p", Publish: []string{"svc.>"}, Subscribe: []string{"svc.none"}}))
	var mu sync.Mutex
	seen := map[string]bool{}
	srv := connect(t, s.URL())
	if _, err := shim.Serve(srv, "svc.echo", shim.Unary(func(_ context.Context, m *nats.Msg) ([]byte, error) {
		mu.Lock()
		seen[string(m.Data)] = true
		mu.Unlock()
		return []byte("ok"), nil
	})); err != nil {
		t.Fatal(err)
	}
	if err := srv.Flush(); err != nil {
		t.Fatal(err)
	}
	nc := connect(t, s.UserURL("noinbox"))
	c := shim.NewClient(nc, shim.WithTimeout(10*time.Second))
	ctx := context.Background()

	t0 := time.Now()
	_, err := c.Request(ctx, "svc.echo", []byte("first"))
	// The request went out with the subscription the server refused.
	deniedWithin(t, err, time.Since(t0), "_INBOX", shim.OutcomeUnknown)

	for i := range 3 {
		t0 = time.Now()
		_, err = c.Request(ctx, "svc.echo", []byte("refused-"+strconv.Itoa(i)))
		deniedWithin(t, err, time.Since(t0), "_INBOX", shim.OutcomeNotRun)
	}
	// Whatever the caller sent has reached the server (its flush), and the
	// responder has handled everything before the marker (one
	// subscription handles its messages in order).
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := shim.NewClient(connect(t, s.URL())).Request(ctx, "svc.echo", []byte("marker")); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range 3 {
		if seen["refused-"+strconv.Itoa(i)] {
			t.Errorf("request %d, refused as not run, reached the responder", i)
		}
	}
}

// TestServePermissionDenied: Serve on a subject the user may not
// subscribe to fails where it is set up (PERMISSION_DENIED naming the
// subject, nothing left subscribed), plain and in a queue group; an
// allowed subject still serves.
func TestServePermissionDenied(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t,
		natstest.WithUser(natstest.User{Name: "svc", Password: "p", Subscribe: []string{"svc.ok"}, Responses: "true"}))
	nc := connect(t, s.UserURL("svc"))
	echo := shim.Unary(func(_ context.Context, m *nats.Msg) ([]byte, error) { return m.Data, nil })

	for _, queue := range []string{"", "workers"} {
		var sub *nats.Subscription
		var err error
		t0 := time.Now()
		if queue == "" {
			sub, err = shim.Serve(nc, "svc.no", echo)
		} else {
			sub, err = shim.ServeQueue(nc, "svc.no", queue, echo)
		}
		if sub != nil {
			t.Errorf("queue %q: a subscription was returned with %v", queue, err)
		}
		deniedWithin(t, err, time.Since(t0), "svc.no", shim.OutcomeNotRun)
	}
	if n := nc.NumSubscriptions(); n != 0 {
		t.Errorf("%d subscriptions left after the refusals", n)
	}
	if _, err := shim.Serve(nc, "svc.ok", echo); err != nil {
		t.Fatalf("an allowed subject: %v", err)
	}
	caller := shim.NewClient(connect(t, s.URL()))
	if r, err := caller.Request(context.Background(), "svc.ok", []byte("hi")); err != nil || string(r.Data) != "hi" {
		t.Errorf("the allowed service answered %v, %v", r, err)
	}
}

// TestReplyRefusedGoesToOnError: a responder whose user may not publish
// its reply (no allow_responses) hears of it through OnError, as
// PERMISSION_DENIED naming the reply subject, once per refused reply; the
// caller gets no reply. Other requests' replies are not blamed.
func TestReplyRefusedGoesToOnError(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t,
		natstest.WithUser(natstest.User{Name: "svc", Password: "p", Publish: []string{"nothing"}, Subscribe: []string{"svc.>"}}))
	reported := make(chan error, 16)
	srv := connect(t, s.UserURL("svc"))
	if _, err := shim.Serve(srv, "svc.echo", shim.Unary(func(_ context.Context, m *nats.Msg) ([]byte, error) { return m.Data, nil },
		shim.OnError(func(_ *nats.Msg, err error) { reported <- err }))); err != nil {
		t.Fatal(err)
	}
	c := shim.NewClient(connect(t, s.URL()), shim.WithTimeout(500*time.Millisecond))
	for i := range 3 {
		_, err := c.Request(context.Background(), "svc.echo", []byte("x"))
		if shim.Describe(err).Code != shim.CodeDeadlineExceeded {
			t.Fatalf("request %d: %v; want the deadline (the reply was dropped)", i, err)
		}
		select {
		case err := <-reported:
			if shim.Describe(err).Code != shim.CodePermissionDenied || !errors.Is(err, nats.ErrPermissionViolation) ||
				!strings.Contains(err.Error(), "_INBOX") || shim.Classify(err) != shim.OutcomeUnknown {
				t.Errorf("request %d: OnError got %v; want PERMISSION_DENIED naming the reply subject", i, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("request %d: OnError was not told of the refused reply", i)
		}
	}
	select {
	case err := <-reported:
		t.Errorf("an extra report: %v", err)
	default:
	}
}
