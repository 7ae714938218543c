package faultmatrix_test

import (
	"context"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// Handler and JSONHandler replies under faults on the responder's side.
func TestHandlerReplies(t *testing.T) {
	t.Parallel()
	runRows(t, []reqRow{
		{name: "JSONHandler: responder connection dropped before its reply is forwarded", beh: behave{json: true}, deadline: short, ran: 1,
			fault: on(respP, withAction(replyUp, natstest.Cut), responderGone), want: unknownTimeout},
		{name: "JSONHandler: responder crashes", beh: behave{json: true, crash: true}, deadline: short, ran: 1, want: unknownTimeout},
		{name: "Handler: finishes while its connection reconnects", deadline: short, ran: 1, want: unknownTimeout,
			fault: func(e *env, c *call) {
				e.h.inside(func(context.Context) {
					up := down(e.t, e.rp)
					natstest.Eventually(e.t, settle, func() bool { return !e.resp.IsConnected() }, "the responder to see the disconnect")
					e.h.afterReply(up)
				})
			},
			check: func(t *testing.T, e *env) {
				errs := e.h.onErrors()
				if len(errs) == 0 {
					t.Fatal("OnError was not told that the reply was not sent")
				}
				if o := shim.Classify(errs[0]); o != shim.OutcomeNotRun {
					t.Errorf("OnError got %v (%v), want the reply's send reported as not run", errs[0], o)
				}
			}},
		{name: "Handler: reply lost with a server restart before it is forwarded", deadline: 2 * short, ran: 1, want: unknownTimeout,
			fault: on(respP, withAction(replyUp, natstest.Cut), doRestart)},
	})
	runRows(t, []fnRow{{"Handler forwards req.Header to a backend through a plain Client", gatewayRow}})
}

// gatewayRow: a gateway's Handler (with ServeClaimChecks) forwards its
// request, headers and all, to a backend through a Client without claim
// checks; the backend's reply is above the limit. The outer caller
// accepts claim checks, so the forwarded request carries the accept
// header: the gateway's Client must not take the backend's claim check
// for an empty success.
func gatewayRow(t *testing.T) {
	e := newEnv(t)
	big := payload(bigSize, 8)
	backend := shim.Handler(func(context.Context, *nats.Msg) ([]byte, error) { return big, nil },
		shim.ServeClaimChecks(e.rst), shim.Conn(e.resp))
	if _, err := e.resp.Subscribe("backend", backend); err != nil {
		t.Fatal(err)
	}
	gwc := dial(t, e.s.URL())
	plain := shim.NewClient(gwc)
	var mu sync.Mutex
	var got []int
	gw := shim.Handler(func(ctx context.Context, req *nats.Msg) ([]byte, error) {
		reply, err := plain.RequestMsg(ctx, &nats.Msg{Subject: "backend", Data: req.Data, Header: req.Header})
		if err != nil {
			return nil, err
		}
		mu.Lock()
		got = append(got, len(reply.Data))
		mu.Unlock()
		return reply.Data, nil
	}, shim.ServeClaimChecks(store(t, gwc)), shim.Conn(gwc))
	if _, err := gwc.Subscribe(subject, gw); err != nil {
		t.Fatal(err)
	}
	for _, nc := range []*nats.Conn{e.resp, gwc} {
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	reply, err := shim.NewClient(e.caller, shim.WithClaimChecks(e.cst)).Request(ctx, subject, []byte("q"))
	mu.Lock()
	defer mu.Unlock()
	if err == nil {
		t.Fatalf("the gateway answered a %d-byte success (its backend call returned bodies of %v bytes); the backend's %d bytes were lost", len(reply.Data), got, len(big))
	}
	wantErr{outcome: shim.OutcomeUnknown, sent: yes}.check(t, err)
	e.checkLeft(0)
}
