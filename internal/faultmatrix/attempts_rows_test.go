package faultmatrix_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// Attempts, with and without an OperationID.
func TestAttempts(t *testing.T) {
	t.Parallel()
	three := []shim.CallOption{shim.Attempts(3)}
	threeID := []shim.CallOption{shim.Attempts(3), shim.OperationID("op-1")}
	fiveNoID := []shim.CallOption{shim.Attempts(5)}
	dropFirstReply := func(e *env, c *call) { e.expect(e.cp.On(replyDown(e, natstest.Drop))) }
	runRows(t, []reqRow{
		{name: "no ID: ctx cancelled before the send", opts: three, fault: cancelBefore, fast: true, ran: 0,
			want: wantErr{outcome: shim.OutcomeNotRun, code: shim.CodeCanceled, is: []error{context.Canceled}, sent: no}},
		{name: "no ID: call timeout over before nats.go writes", opts: []shim.CallOption{shim.Attempts(3), shim.Timeout(time.Nanosecond)}, fast: true, ran: 0,
			want: wantErr{outcome: shim.OutcomeNotRun, is: []error{context.DeadlineExceeded}, sent: no}},
		{name: "no ID: no responders, then served", opts: three, late: true, fast: true, ran: 1, want: ok,
			fault: func(e *env, c *call) {
				e.expect(e.cp.On(natstest.Rule{Dir: natstest.ToClient, Match: e.noResponders, Hook: func(natstest.Frame) { e.h.subscribe(e.t) }}))
			}},
		{name: "no ID: reply lost (not sent again)", opts: three, deadline: short, ran: 1, fault: dropFirstReply, want: unknownTimeout},
		{name: "no ID: caller connection dropped during the request upload", bigReq: true, opts: fiveNoID, fast: true, ran: 1, want: ok,
			fault: on(callerP, withAction(chunkUp(2), natstest.Cut), nil)},
		{name: "no ID: server restart during the request upload", bigReq: true, opts: fiveNoID, fast: true, ran: 1, want: ok,
			fault: on(callerP, chunkUp(2), doRestart)},
		{name: "no ID: caller connection reset in the middle of a chunk", bigReq: true, opts: fiveNoID, fast: true, ran: 1, want: ok,
			fault: func(e *env, c *call) { e.expect(e.cp.CutAfterBytes(natstest.ToServer, limit+limit/2, nil)) }},
		{name: "no ID: claim-checked request uploaded once", bigReq: true, opts: []shim.CallOption{shim.Attempts(10)}, fast: true, ran: 1, want: ok,
			fault: func(e *env, c *call) {
				e.counter = e.cp.On(natstest.Rule{Dir: natstest.ToServer, Subject: metas, Every: true})
			},
			check: uploadedOnce},
		{name: "ID: reply to the first attempt lost", opts: threeID, ran: -1, fault: dropFirstReply, want: ok},
		{name: "ID: caller connection dropped after the server had the request", opts: threeID, ran: -1, want: ok,
			fault: on(callerP, reqSent, callerGone)},
		{name: "ID: server restart while waiting", opts: threeID, ran: -1, fault: restartInHandler, want: ok},
		{name: "ID: ctx cancelled while waiting (not sent again)", opts: threeID, beh: behave{block: true}, ran: 1, fast: true,
			fault: on(callerP, reqSent, doCancel),
			want:  wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeCanceled, is: []error{context.Canceled}, sent: yes}},
		{name: "ID: responder crashes", opts: threeID, beh: behave{crash: true}, deadline: 2 * short, ran: 1,
			want: wantErr{outcome: shim.OutcomeUnknown}},
		{name: "ID: 100 ms responder, Attempts(200) in 4 s", beh: behave{work: 100 * time.Millisecond}, deadline: 4 * time.Second, ran: -1, want: ok,
			opts: []shim.CallOption{shim.Attempts(200), shim.OperationID("op-1")}},
		{name: "ID: Attempts(math.MaxInt)", ran: -1, fast: true, want: ok,
			opts: []shim.CallOption{shim.Attempts(math.MaxInt), shim.OperationID("op-1")}},
		{name: "ID: claim-checked request, reply to the first attempt lost, uploaded once", bigReq: true, opts: threeID, ran: -1, want: ok,
			fault: func(e *env, c *call) {
				dropFirstReply(e, c)
				e.counter = e.cp.On(natstest.Rule{Dir: natstest.ToServer, Subject: metas, Every: true})
			},
			check: uploadedOnce},
	})
}

// uploadedOnce checks that the call stored its request once (one object
// meta message from the caller).
func uploadedOnce(t *testing.T, e *env) {
	if n := e.counter.Count(); n != 1 {
		t.Errorf("the request was uploaded %d times, want once per call", n)
	}
}
