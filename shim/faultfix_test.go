package shim_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// A Client without WithClaimChecks never advertises that it accepts
// claim-checked replies, whichever way the header reaches its request
// (forwarded from an incoming request, set with WithHeader or on the
// message in any case), so a responder that serves claim checks answers a
// large reply with PAYLOAD_TOO_LARGE, never with a reference the caller
// cannot read.
func TestPlainClientNeverAcceptsClaimChecks(t *testing.T) {
	t.Parallel()
	e := newOverflowEnv(t)
	resp := &sizedResponder{}
	e.serveHandler(t, shim.Handler(resp.fn, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc)))
	want := strconv.Itoa(2 * overflowLimit)
	cases := []struct {
		name   string
		client *shim.Client
		hdr    nats.Header
	}{
		{"forwarded header", shim.NewClient(e.nc), nats.Header{"Want": {want}, shim.HeaderAcceptClaimCheck: {e.bucketName}}},
		{"lower-case key", shim.NewClient(e.nc), nats.Header{"Want": {want}, "natssend-accept-claim-check": {e.bucketName}}},
		{"WithHeader", shim.NewClient(e.nc, shim.WithHeader(shim.HeaderAcceptClaimCheck, e.bucketName)), nats.Header{"Want": {want}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reply, err := tc.client.RequestMsg(context.Background(), &nats.Msg{Subject: "svc", Header: tc.hdr})
			if err == nil {
				t.Fatalf("got success with a %d-byte body; want PAYLOAD_TOO_LARGE from the responder", len(reply.Data))
			}
			if !errors.Is(err, shim.ErrReplyTooLarge) || shim.Classify(err) != shim.OutcomeUnknown {
				t.Fatalf("want a PAYLOAD_TOO_LARGE reply (unknown outcome), got %v (%v)", err, shim.Classify(err))
			}
			if _, _, h := resp.state(); h.Get(shim.HeaderAcceptClaimCheck) != "" {
				t.Fatalf("the responder saw %s: %q", shim.HeaderAcceptClaimCheck, h.Get(shim.HeaderAcceptClaimCheck))
			}
		})
	}
	if n := e.stored(t); n != 0 {
		t.Fatalf("%d messages left in the bucket", n)
	}
}

// A claim-checked reply that reaches a Client without a store (a
// responder that ignores the accept header) is REPLY_LOST with an unknown
// outcome, never a success with the reference's empty body.
func TestPlainClientClaimCheckedReplyIsLost(t *testing.T) {
	t.Parallel()
	e := newOverflowEnv(t)
	// A responder that answers with a claim check whatever the request says.
	sub, err := e.rnc.Subscribe("svc", func(m *nats.Msg) {
		ref, err := e.rst.Prepare(context.Background(), &nats.Msg{Subject: m.Reply, Data: make([]byte, 2*overflowLimit)}, 0)
		if err != nil {
			t.Error(err)
			return
		}
		_ = m.RespondMsg(ref) //natssend:reviewed test: a responder that breaks the protocol
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	_ = e.rnc.Flush()
	reply, err := shim.NewClient(e.nc).Request(context.Background(), "svc", []byte("x"))
	if err == nil {
		t.Fatalf("got success with a %d-byte body for a claim-checked reply", len(reply.Data))
	}
	var se *shim.Error
	if !errors.As(err, &se) || se.Code != shim.CodeReplyLost || !errors.Is(err, shim.ErrReplyLost) || shim.Classify(err) != shim.OutcomeUnknown {
		t.Fatalf("want REPLY_LOST (unknown), got %v", err)
	}
}

// A context that ends after the decision but before the write is not run:
// nats.go returns the context's error without writing anything, and the
// responder never sees the request.
func TestContextDoneBeforeWriteIsNotRun(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	var runs counter
	serve(t, s, "svc", shim.Handler(func(context.Context, *nats.Msg) ([]byte, error) { runs.inc(); return nil, nil }))
	nc := connect(t, s.URL())
	st := connlimit.For(nc)
	for _, cancelled := range []bool{true, false} {
		// The hook runs after the decision, right before the write.
		callCtx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		if cancelled {
			st.SetBeforeSend(cancel)
		} else {
			st.SetBeforeSend(func() { <-callCtx.Done() })
		}
		_, err := shim.NewClient(nc).Request(callCtx, "svc", []byte("x"))
		st.SetBeforeSend(nil)
		cancel()
		var se *shim.Error
		if shim.Classify(err) != shim.OutcomeNotRun || !errors.As(err, &se) || se.Sent {
			t.Fatalf("cancelled=%v: want not run and not sent, got %v (%v)", cancelled, err, shim.Classify(err))
		}
		if wantErr := map[bool]error{true: context.Canceled, false: context.DeadlineExceeded}[cancelled]; !errors.Is(err, wantErr) {
			t.Fatalf("cancelled=%v: want errors.Is %v, got %v", cancelled, wantErr, err)
		}
	}
	stays(t, 100*time.Millisecond, func() bool { return runs.get() == 0 }, "the handler never ran")
}

// Retry stops at once on a not-run refusal that would be the same again:
// a local PAYLOAD_TOO_LARGE and a closed connection.
func TestRetryStopsOnPermanentRefusals(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t, natstest.MaxPayload(1024))
	nc := connect(t, s.URL())
	closed := connect(t, s.URL())
	closed.Close()
	cases := map[string]func(ctx context.Context) error{
		"too large": func(ctx context.Context) error {
			_, err := shim.NewClient(nc).Request(ctx, "svc", make([]byte, 2048))
			return err
		},
		"closed connection": func(ctx context.Context) error {
			_, err := shim.NewClient(closed).Request(ctx, "svc", []byte("x"))
			return err
		},
	}
	for name, op := range cases {
		runs := 0
		err := shim.Retry(context.Background(), func(ctx context.Context) error { runs++; return op(ctx) }, shim.MaxAttempts(5), shim.Backoff(time.Millisecond, time.Millisecond))
		if runs != 1 || shim.Classify(err) != shim.OutcomeNotRun {
			t.Fatalf("%s: ran %d times (want 1), err %v", name, runs, err)
		}
	}
}

// A claim-checked request resolved by a responder whose Store uses
// another bucket: the reference names the caller's bucket, so the
// responder reads the request from there and the handler runs once with
// the whole body.
func TestRequestFromAnotherBucketResolves(t *testing.T) {
	t.Parallel()
	e := newOverflowEnv(t)
	js, err := jetstream.New(e.rnc)
	if err != nil {
		t.Fatal(err)
	}
	other, err := claimcheck.New(context.Background(), js, claimcheck.WithBucket("other_bucket"), claimcheck.WithStorage(jetstream.MemoryStorage))
	if err != nil {
		t.Fatal(err)
	}
	resp := &sizedResponder{}
	e.serveHandler(t, shim.Handler(resp.fn, shim.ServeClaimChecks(other), shim.Conn(e.rnc)))
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst))
	body := payload(2*overflowLimit, 7)
	if _, err := c.Request(context.Background(), "svc", body); err != nil {
		t.Fatal(err)
	}
	runs, got, _ := resp.state()
	if runs != 1 || !bytes.Equal(got, body) {
		t.Fatalf("the handler ran %d times with %d bytes, want once with the %d bytes sent", runs, len(got), len(body))
	}
	// A reply over the limit is stored in the responder's bucket; the
	// caller reads it from there and deletes both payloads.
	reply, err := c.RequestMsg(context.Background(), &nats.Msg{Subject: "svc", Header: nats.Header{"Want": {strconv.Itoa(3 * overflowLimit)}}, Data: body})
	if err != nil || len(reply.Data) != 3*overflowLimit {
		t.Fatalf("a claim-checked reply from another bucket: %v", err)
	}
	for _, st := range []*claimcheck.Store{e.cst, other} {
		natstest.Eventually(t, 5*time.Second, func() bool {
			str, err := js.Stream(context.Background(), "OBJ_"+st.Bucket())
			return err == nil && str.CachedInfo().State.Msgs == 0
		}, "bucket "+st.Bucket()+" to be empty")
	}
}
