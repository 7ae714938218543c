package shim_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/shim"
)

// The per-call Timeout is the call's deadline, above and below the
// Client's WithTimeout, with and without Attempts and claim checks.
func TestCallTimeoutAboveAndBelowClient(t *testing.T) {
	t.Parallel()
	e := newOverflowEnv(t)
	const clientShort, slow = 300 * time.Millisecond, time.Second
	slowFn := shim.Handler(func(ctx context.Context, m *nats.Msg) ([]byte, error) {
		// Slower than the Client's default, faster than the call's Timeout.
		select {
		case <-time.After(slow):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return []byte("done"), nil
	}, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc))
	for range 6 { // one member of the queue group per parallel subtest
		if _, err := e.rnc.QueueSubscribe("svc", "slow", slowFn); err != nil {
			t.Fatal(err)
		}
	}
	// A responder that never answers.
	if _, err := e.rnc.Subscribe("silent", func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	if err := e.rnc.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, cc := range []bool{false, true} {
		for _, attempts := range [][]shim.CallOption{nil, {shim.Attempts(3)}, {shim.Attempts(3), shim.OperationID("op-t")}} {
			var copts []shim.Option
			name := "plain"
			if cc {
				copts, name = append(copts, shim.WithClaimChecks(e.cst)), "claim checks"
			}
			name += " " + map[int]string{0: "one send", 1: "Attempts", 2: "Attempts+ID"}[len(attempts)]
			t.Run(name+"/above", func(t *testing.T) {
				t.Parallel()
				c := shim.NewClient(e.nc, append(copts, shim.WithTimeout(clientShort))...)
				start := time.Now()
				reply, err := c.Request(context.Background(), "svc", []byte("q"), append(attempts, shim.Timeout(10*slow))...)
				if err != nil || string(reply.Data) != "done" {
					t.Fatalf("after %v: %v; want the reply of a %v handler within Timeout(%v) (the Client's is %v)", time.Since(start), err, slow, 10*slow, clientShort)
				}
			})
			t.Run(name+"/below", func(t *testing.T) {
				t.Parallel()
				const callTimeout = 400 * time.Millisecond
				c := shim.NewClient(e.nc, append(copts, shim.WithTimeout(time.Minute))...)
				start := time.Now()
				_, err := c.Request(context.Background(), "silent", []byte("q"), append(attempts, shim.Timeout(callTimeout))...)
				took := time.Since(start)
				if !errors.Is(err, context.DeadlineExceeded) || shim.Classify(err) != shim.OutcomeUnknown {
					t.Fatalf("%v; want the call's deadline, outcome unknown", err)
				}
				if took < callTimeout || took > 20*callTimeout {
					t.Fatalf("the call ended after %v; want its Timeout (%v), not the Client's (1m)", took, callTimeout)
				}
			})
		}
	}
}

// REPLY_LOST (the responder ran and stored its reply, which could not be
// read) is an unknown outcome: Attempts sends the call again under an
// OperationID, and without one the call ends with it.
func TestAttemptsResendLostReply(t *testing.T) {
	t.Parallel()
	e := newOverflowEnv(t)
	var runs atomic.Int64
	var badReq atomic.Value
	sub, err := e.rnc.Subscribe("svc", func(m *nats.Msg) {
		n := runs.Add(1)
		ctx := context.Background()
		if claimcheck.IsClaimCheck(m) {
			// A claim-checked request: it must still be readable on
			// every attempt.
			if _, err := e.rst.Resolve(ctx, m); err != nil {
				badReq.Store(err)
			}
		}
		if n == 1 { // the first delivery: a reply stored, then lost
			ref, err := e.rst.Prepare(ctx, &nats.Msg{Subject: m.Reply, Data: make([]byte, 2*overflowLimit)}, 0)
			if err != nil {
				t.Error(err)
				return
			}
			_ = e.rst.Discard(ctx, ref)
			_ = m.RespondMsg(ref) //natssend:reviewed test: a reply whose payload is gone
			return
		}
		_ = m.Respond([]byte("ok")) //natssend:reviewed test: a raw responder
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	_ = e.rnc.Flush()
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst))
	for _, big := range []bool{false, true} {
		req := []byte("q")
		if big {
			req = payload(2*overflowLimit, 9)
		}
		runs.Store(0)
		reply, err := c.Request(context.Background(), "svc", req, shim.Attempts(3), shim.OperationID("op-lost"))
		if err != nil || string(reply.Data) != "ok" || runs.Load() != 2 {
			t.Errorf("big request %v, with an ID: %v (%d runs); want the second attempt's reply", big, err, runs.Load())
		}
		runs.Store(0)
		_, err = c.Request(context.Background(), "svc", req, shim.Attempts(3))
		if !errors.Is(err, shim.ErrReplyLost) || shim.Classify(err) != shim.OutcomeUnknown || runs.Load() != 1 {
			t.Errorf("big request %v, no ID: %v (%d runs); want REPLY_LOST after one run", big, err, runs.Load())
		}
	}
	if v := badReq.Load(); v != nil {
		t.Errorf("a repeat could not read the claim-checked request: %v", v)
	}
}
