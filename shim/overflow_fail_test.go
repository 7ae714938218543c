package shim_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

func TestOverflowDeadlineDuringRequestUpload(t *testing.T) {
	t.Parallel()
	e := newOverflowEnv(t)
	resp := &sizedResponder{}
	e.serveHandler(t, shim.Handler(resp.fn, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc)))
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst))
	warm(t, c)
	_, err := c.Request(context.Background(), "svc", make([]byte, 64<<20), shim.Timeout(30*time.Millisecond))
	var se *shim.Error
	if !errors.As(err, &se) || se.Sent || shim.Classify(err) != shim.OutcomeNotRun || !errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(err.Error(), "storing the request") {
		t.Fatalf("deadline during the upload: want a not-run deadline error, got %v (%+v)", err, se)
	}
	natstest.Eventually(t, 10*time.Second, func() bool { return e.stored(t) == 0 }, "no chunk left in the bucket")
	stays(t, 200*time.Millisecond, func() bool { return e.tap.on("svc") == 0 }, "nothing sent")
	if runs, _, _ := resp.state(); runs != 0 {
		t.Fatalf("responder ran %d times", runs)
	}
}

func TestOverflowDeadlineDuringResolve(t *testing.T) {
	t.Parallel()
	e := newOverflowEnv(t)
	resp := &sizedResponder{}
	e.serveHandler(t, shim.Handler(resp.fn, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc)))
	// A claim-checked request that leaves the responder 1 ms to read
	// 32 MiB, as a caller whose deadline is about to pass does.
	ref, err := e.cst.Prepare(context.Background(), &nats.Msg{Subject: "svc", Data: make([]byte, 32<<20)}, 64)
	if err != nil || !claimcheck.IsClaimCheck(ref) {
		t.Fatalf("prepare: %v", err)
	}
	ref.Header.Set(shim.HeaderTimeout, "1")
	reply, err := e.nc.RequestMsg(ref, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := reply.Header.Get(shim.HeaderErrorCode); got != shim.CodeClaimCheckUnresolved || reply.Header.Get(shim.HeaderOutcome) != "rejected" ||
		!strings.Contains(reply.Header.Get(shim.HeaderError), "deadline") {
		t.Fatalf("reply headers %v, want a %s rejection for the deadline", reply.Header, shim.CodeClaimCheckUnresolved)
	}
	if runs, _, _ := resp.state(); runs != 0 {
		t.Fatalf("handler ran %d times", runs)
	}
	// The responder never deletes the request payload.
	if n := e.stored(t); n == 0 {
		t.Fatal("the responder deleted the request payload")
	}
	if err := e.cst.Discard(context.Background(), ref); err != nil {
		t.Fatal(err)
	}
}

func TestOverflowDeadlineDuringReplyDownload(t *testing.T) {
	// Not in parallel: its rounds time the reply's download, which other
	// tests' load makes miss its deadline margins.
	e := newOverflowEnv(t)
	// A responder that stores a 32 MiB reply and sends its reference a
	// margin before the caller's deadline: the operation completed, and
	// the download (which would need over 1.6 GB/s at a 20 ms margin)
	// cannot finish. The test shares the caller's absolute deadline with
	// the responder, so that transit and scheduling delays do not eat into
	// the margin. The responder must be done storing before that moment:
	// time one store of the same size first, so that a slow machine
	// (-race, load) gets a longer deadline instead of a responder that
	// answers late.
	//
	// Whether the reference arrives before the deadline is up to the
	// scheduler: when it does not (the caller's deadline passes with no
	// reply) or the download wins the race, the round tells nothing, and
	// the next one gets a wider margin. Any other result fails.
	reply := make([]byte, 32<<20)
	start := time.Now()
	warm, err := e.rst.Prepare(context.Background(), &nats.Msg{Subject: "warm-up", Data: reply}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.rst.Discard(context.Background(), warm); err != nil {
		t.Fatal(err)
	}
	store := max(3*time.Second, 4*time.Since(start))
	var deadline, margin atomic.Int64
	if _, err := e.rnc.Subscribe("svc", func(m *nats.Msg) {
		ref, err := e.rst.Prepare(context.Background(), &nats.Msg{Subject: m.Reply, Data: reply}, 0)
		if err != nil {
			t.Error(err)
			return
		}
		at := time.Unix(0, deadline.Load()).Add(-time.Duration(margin.Load()))
		if time.Until(at) < 0 {
			t.Errorf("the responder stored the reply %v after the moment it was to answer", -time.Until(at))
		}
		time.Sleep(time.Until(at)) // the reference goes out at the chosen moment
		_ = m.RespondMsg(ref)
	}); err != nil {
		t.Fatal(err)
	}
	_ = e.rnc.Flush()
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst))
	for _, m := range []time.Duration{20 * time.Millisecond, 60 * time.Millisecond, 150 * time.Millisecond, 40 * time.Millisecond} {
		d := time.Now().Add(store)
		deadline.Store(d.UnixNano())
		margin.Store(int64(m))
		ctx, cancel := context.WithDeadline(context.Background(), d)
		_, err = c.Request(ctx, "svc", []byte("q"))
		cancel()
		var se *shim.Error
		switch {
		case err == nil, errors.As(err, &se) && se.Code == shim.CodeDeadlineExceeded:
			t.Logf("margin %v: the round told nothing (%v)", m, err)
			continue
		case !errors.As(err, &se) || se.Code != shim.CodeReplyLost || !errors.Is(err, shim.ErrReplyLost) || !errors.Is(err, context.DeadlineExceeded) ||
			shim.Classify(err) != shim.OutcomeUnknown || !se.Sent:
			t.Fatalf("deadline during the download: want REPLY_LOST (unknown), got %v", err)
		}
		if n := e.stored(t); n != 0 {
			t.Fatalf("the caller left %d messages of the reply payload", n)
		}
		return
	}
	t.Fatal("in no round did the deadline fall during the download")
}

func TestOverflowReplyMissing(t *testing.T) {
	t.Parallel()
	e := newOverflowEnv(t)
	// A reference whose payload is gone by the time the caller reads it.
	if _, err := e.rnc.Subscribe("svc", func(m *nats.Msg) {
		ref, err := e.rst.Prepare(context.Background(), &nats.Msg{Subject: m.Reply, Data: make([]byte, 1<<20)}, 0)
		if err != nil {
			t.Error(err)
			return
		}
		_ = e.rst.Discard(context.Background(), ref)
		_ = m.RespondMsg(ref)
	}); err != nil {
		t.Fatal(err)
	}
	_ = e.rnc.Flush()
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst))
	_, err := c.Request(context.Background(), "svc", []byte("q"))
	if !errors.Is(err, shim.ErrReplyLost) || !errors.Is(err, claimcheck.ErrMissing) || shim.Classify(err) != shim.OutcomeUnknown {
		t.Fatalf("missing reply payload: got %v", err)
	}
}

func TestOverflowForgedReference(t *testing.T) {
	t.Parallel()
	e := newOverflowEnv(t)
	resp := &sizedResponder{}
	e.serveHandler(t, shim.Handler(resp.fn, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc)))
	// An object stored for another subject, referred to from "svc".
	other, err := e.cst.Prepare(context.Background(), &nats.Msg{Subject: "other", Data: make([]byte, 1<<20)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	forged := &nats.Msg{Subject: "svc", Header: nats.Header{
		claimcheck.HeaderRef:  other.Header[claimcheck.HeaderRef],
		claimcheck.HeaderSize: other.Header[claimcheck.HeaderSize],
	}}
	reply, err := e.nc.RequestMsg(forged, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Header.Get(shim.HeaderErrorCode) != shim.CodeClaimCheckUnresolved || reply.Header.Get(shim.HeaderOutcome) != "rejected" {
		t.Fatalf("forged reference answered with %v", reply.Header)
	}
	if runs, _, _ := resp.state(); runs != 0 {
		t.Fatalf("handler ran %d times on a forged reference", runs)
	}
	// The object of the other subject is untouched.
	if _, err := e.cst.Resolve(context.Background(), other); err != nil {
		t.Fatalf("the other subject's object: %v", err)
	}
}
