package faultmatrix_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// Client.Request and RequestMsg, small request and reply.
func TestRequest(t *testing.T) {
	t.Parallel()
	runRows(t, []reqRow{
		{name: "ctx cancelled before the send", fault: cancelBefore, fast: true,
			want: wantErr{outcome: shim.OutcomeNotRun, code: shim.CodeCanceled, is: []error{context.Canceled}, sent: no}},
		{name: "deadline passed before the send", deadline: time.Nanosecond, fast: true,
			want: wantErr{outcome: shim.OutcomeNotRun, code: shim.CodeDeadlineExceeded, is: []error{context.DeadlineExceeded}, sent: no}},
		{name: "call timeout over before nats.go writes", opts: []shim.CallOption{shim.Timeout(time.Nanosecond)}, fast: true,
			want: wantErr{outcome: shim.OutcomeNotRun, is: []error{context.DeadlineExceeded}, sent: no}},
		{name: "caller connection dropped before the send", fault: dropCaller(false), fast: true,
			want: wantErr{outcome: shim.OutcomeNotRun, code: shim.CodeUnavailable, is: []error{nats.ErrConnectionReconnecting}, sent: no}},
		{name: "server restart before the send", fault: dropCaller(true), fast: true,
			want: wantErr{outcome: shim.OutcomeNotRun, code: shim.CodeUnavailable, is: []error{nats.ErrConnectionReconnecting}, sent: no}},
		{name: "ctx cancelled while waiting", beh: behave{block: true}, fast: true, ran: 1,
			fault: on(callerP, reqSent, doCancel),
			want:  wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeCanceled, is: []error{context.Canceled}, sent: yes}},
		{name: "deadline while waiting", beh: behave{stuck: true}, deadline: short, ran: 1, want: unknownTimeout},
		{name: "server restart while waiting", deadline: 2 * short, ran: 1, fault: restartInHandler, want: unknownTimeout},
		{name: "server restart when the request reaches the responder", deadline: short, ran: 0,
			fault: on(respP, withAction(reqDelivered, natstest.Cut), doRestart), want: unknownTimeout},
		{name: "caller connection dropped before the request is forwarded", deadline: short, ran: 0,
			fault: on(callerP, reqUnsent, func(e *env, c *call, f natstest.Frame) { callerGone(e, c, f); e.cp.Cut() }),
			want:  unknownTimeout},
		{name: "caller connection dropped after the server had the request", beh: behave{stuck: true}, deadline: short, ran: 1,
			fault: on(callerP, reqSent, callerGone), want: unknownTimeout},
		{name: "responder connection dropped when the request is delivered", deadline: short, ran: 0,
			fault: on(respP, withAction(reqDelivered, natstest.Cut), responderGone), want: unknownTimeout},
		{name: "responder connection dropped before its reply is forwarded", deadline: short, ran: 1,
			fault: on(respP, withAction(replyUp, natstest.Cut), responderGone), want: unknownTimeout},
		{name: "reply lost on the way to the caller", deadline: short, ran: 1,
			fault: func(e *env, c *call) { e.expect(e.cp.On(replyDown(e, natstest.Drop))) }, want: unknownTimeout},
		{name: "responder crashes (connection closed, no reply)", beh: behave{crash: true}, deadline: short, ran: 1, want: unknownTimeout},
		{name: "RequestMsg: reply lost on the way to the caller", msg: true, deadline: short, ran: 1,
			fault: func(e *env, c *call) { e.expect(e.cp.On(replyDown(e, natstest.Drop))) }, want: unknownTimeout},
		{name: "RequestMsg: ctx cancelled while waiting", msg: true, beh: behave{block: true}, fast: true, ran: 1,
			fault: on(callerP, reqSent, doCancel),
			want:  wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeCanceled, is: []error{context.Canceled}, sent: yes}},
		{name: "no fault", ran: 1, fast: true, want: wantErr{outcome: shim.OutcomeOK}},
	})
}
