package faultmatrix_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// stream installs a fault made from a proxy rule chosen per row (rule
// needs e for the caller's inbox), with a hook made from act.
func stream(sel func(*env) *natstest.Proxy, rule func(e *env) natstest.Rule, act func(e *env, c *call, r *sresp, f natstest.Frame)) func(e *env, c *call, r *sresp) {
	return func(e *env, c *call, r *sresp) {
		ru := rule(e)
		if act != nil {
			ru.Hook = func(f natstest.Frame) { act(e, c, r, f) }
		}
		e.expect(sel(e).On(ru))
	}
}

// req adapts a request-row fault (it ignores the responder).
func req(f func(e *env, c *call)) func(e *env, c *call, r *sresp) {
	return func(e *env, c *call, _ *sresp) { f(e, c) }
}

func down3(a natstest.Action) func(e *env) natstest.Rule {
	return func(e *env) natstest.Rule { return withAction(frameDown(e, 'D', 3), a) }
}

func fixed(r natstest.Rule) func(*env) natstest.Rule { return func(*env) natstest.Rule { return r } }

var (
	streamCancelled = wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeCanceled, is: []error{context.Canceled, io.ErrUnexpectedEOF}, sent: yes}
	streamDeadline  = wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeDeadlineExceeded, is: []error{context.DeadlineExceeded, io.ErrUnexpectedEOF}, sent: yes}
	streamIdleErr   = wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeStreamBroken, is: []error{io.ErrUnexpectedEOF, shim.ErrStreamIdle}, sent: yes}
	streamBroken    = wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeStreamBroken, is: []error{io.ErrUnexpectedEOF}, sent: yes}
	firstCancelled  = wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeCanceled, is: []error{context.Canceled}, sent: yes}
	firstDeadline   = wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeDeadlineExceeded, is: []error{context.DeadlineExceeded}, sent: yes}
)

// Client.RequestStream and RequestMsgStream against a StreamHandler.
func TestStream(t *testing.T) {
	t.Parallel()
	runRows(t, []streamRow{
		// Before the send.
		{name: "ctx cancelled before the send", fault: req(cancelBefore), openBy: settle,
			open: &wantErr{outcome: shim.OutcomeNotRun, code: shim.CodeCanceled, is: []error{context.Canceled}, sent: no}},
		{name: "deadline passed before the send", deadline: time.Nanosecond, openBy: settle,
			open: &wantErr{outcome: shim.OutcomeNotRun, code: shim.CodeDeadlineExceeded, is: []error{context.DeadlineExceeded}, sent: no}},
		{name: "caller connection dropped before the send", fault: req(dropCaller(false)), openBy: settle,
			open: &wantErr{outcome: shim.OutcomeNotRun, code: shim.CodeUnavailable, is: []error{nats.ErrConnectionReconnecting}, sent: no}},
		{name: "no responders: not run, at once", noResp: true, openBy: short,
			fault: stream(callerP, func(e *env) natstest.Rule { return natstest.Rule{Dir: natstest.ToClient, Match: e.noResponders} }, nil),
			open:  &wantErr{outcome: shim.OutcomeNotRun, code: shim.CodeNoResponders, is: []error{nats.ErrNoResponders}, sent: yes}},

		// While waiting for the first frame. The responder, released
		// after the call, must find the caller gone.
		{name: "ctx cancelled while waiting for the first frame", hold: true, endless: true, ran: 1, openBy: settle,
			opts: []shim.StreamOption{shim.StreamWindow(smallWindow)}, fault: stream(callerP, fixed(reqSent), streamAct(doCancel)),
			open: &firstCancelled, respErr: []error{shim.ErrCallerGone}},
		{name: "deadline while waiting for the first frame", hold: true, endless: true, ran: 1, deadline: short,
			opts: []shim.StreamOption{shim.StreamWindow(smallWindow)},
			open: &firstDeadline, respErr: []error{context.DeadlineExceeded}},
		{name: "Timeout over while waiting for the first frame (ctx still live)", hold: true, endless: true, ran: 1, openBy: settle,
			opts: []shim.StreamOption{shim.StreamWindow(smallWindow), shim.Timeout(500 * time.Millisecond)},
			open: &firstDeadline, respErr: []error{shim.ErrCallerGone}},

		// Mid-stream: the caller's side.
		{name: "ctx cancelled mid-stream", endless: true, ran: 1, opts: []shim.StreamOption{shim.StreamWindow(smallWindow)},
			fault: stream(callerP, down3(natstest.Pass), whenOpen(streamAct(doCancel))), read: streamCancelled,
			respErr: []error{shim.ErrStreamCanceled, shim.ErrCallerGone}},
		{name: "ctx cancelled mid-stream by the reader, which reads on: the responder is told", endless: true, ran: 1,
			cancelAt: 3 * smallWindow, opts: []shim.StreamOption{shim.StreamWindow(smallWindow)},
			fault: stream(callerP, fixed(natstest.Rule{Dir: natstest.ToServer, Match: isFrame('C')}), nil),
			read:  streamCancelled, respErr: []error{shim.ErrStreamCanceled}},
		// The deadline is below streamIdle: the deadline, not the idle bound, ends it.
		{name: "deadline mid-stream", endless: true, ran: 1, deadline: short / 2, opts: []shim.StreamOption{shim.StreamWindow(smallWindow)},
			fault: stream(callerP, down3(natstest.Pass), whenOpen(streamAct(waitDeadline))), read: streamDeadline,
			respErr: []error{shim.ErrStreamCanceled, context.DeadlineExceeded}}, // the caller's cancel or the responder's own deadline (HeaderTimeout), whichever comes first
		{name: "caller closes mid-stream", endless: true, ran: 1, closeAt: 3 * smallWindow, opts: []shim.StreamOption{shim.StreamWindow(smallWindow)},
			fault:   stream(callerP, fixed(natstest.Rule{Dir: natstest.ToServer, Match: isFrame('C')}), nil),
			respErr: []error{shim.ErrStreamCanceled}},
		{name: "caller connection cut mid-stream (it reconnects)", ran: 1,
			fault: stream(callerP, down3(natstest.Cut), nil), read: ok},
		{name: "caller connection cut mid-stream while the responder writes (it reconnects)", endless: true, ran: 1,
			closeAt: 8 * smallWindow, opts: []shim.StreamOption{shim.StreamWindow(smallWindow)},
			fault: stream(callerP, down3(natstest.Cut), nil), respErr: []error{shim.ErrStreamCanceled}},
		{name: "caller connection cut mid-stream and kept down", endless: true, ran: 1, opts: []shim.StreamOption{shim.StreamWindow(smallWindow)},
			fault: stream(callerP, down3(natstest.Pass), whenOpen(func(e *env, _ *call, r *sresp, _ natstest.Frame) {
				up := down(e.t, e.cp)
				r.afterDone(up)
			})), read: streamIdleErr, respErr: []error{shim.ErrCallerGone}},

		// Frames lost or changed in transit.
		{name: "a data frame lost", ran: 1, fault: stream(callerP, down3(natstest.Drop), nil), read: ok},
		{name: "the start frame lost", ran: 1,
			fault: stream(callerP, func(e *env) natstest.Rule { return withAction(frameDown(e, 'S', 1), natstest.Drop) }, nil), read: ok},
		{name: "the end frame lost", ran: 1,
			fault: stream(callerP, func(e *env) natstest.Rule { return withAction(frameDown(e, 'E', 1), natstest.Drop) }, nil), read: ok},
		{name: "RequestMsgStream: a data frame lost", msg: true, ran: 1, fault: stream(callerP, down3(natstest.Drop), nil), read: ok},
		{name: "a data frame changed in transit: never io.EOF", ran: 1, corrupt: true,
			fault: stream(callerP, down3(natstest.Pass), func(_ *env, _ *call, _ *sresp, f natstest.Frame) {
				// Frame.Data aliases the bytes the proxy forwards next.
				f.Data[len(f.Data)/2] ^= 0xff
			}),
			read: wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeStreamBroken, is: []error{io.ErrUnexpectedEOF, shim.ErrStreamCorrupt}, sent: yes}},

		{name: "the handler's error frame lost (sent again, after the whole body)", ran: 1, fnErr: shim.Reject("BUSY", "not now"),
			fault: stream(callerP, func(e *env) natstest.Rule { return withAction(frameDown(e, 'X', 1), natstest.Drop) }, nil),
			read:  wantErr{outcome: shim.OutcomeRejected, code: "BUSY", sent: yes}},
		{name: "a data frame lost before the handler's error", ran: 1, fnErr: errors.New("disk on fire"),
			fault: stream(callerP, down3(natstest.Drop), nil),
			read:  wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeInternal, sent: yes}},

		// Mid-stream: the responder's side and the server.
		{name: "responder connection cut mid-stream and kept down", ran: 1,
			fault: stream(respP, fixed(withAction(frameUp('D', 3), natstest.Cut)), func(e *env, c *call, _ *sresp, _ natstest.Frame) {
				e.rp.SetDown(true)
				c.after(func() { e.rp.SetDown(false) })
			}), read: streamIdleErr},
		{name: "responder crashes mid-stream", ran: 1,
			fault: stream(respP, fixed(frameUp('D', 3)), streamAct(responderCrash)), read: streamBroken},
		{name: "server restart mid-stream: exact or an honest failure", ran: 1, orOK: true,
			opts:  []shim.StreamOption{shim.StreamIdle(5 * time.Second)},
			fault: stream(callerP, down3(natstest.Cut), streamAct(doRestart)), read: streamBroken},

		// A claim-checked stream request (WithClaimChecks, ServeClaimChecks).
		{name: "claim-checked request: ctx cancelled during its upload", bigReq: true, openBy: settle,
			fault: stream(callerP, fixed(chunkUp(2)), streamAct(doCancel)),
			open:  &wantErr{outcome: shim.OutcomeNotRun, code: shim.CodeCanceled, is: []error{context.Canceled}, sent: no}},
		{name: "claim-checked request: caller connection cut during its upload", bigReq: true, openBy: settle,
			fault: stream(callerP, fixed(withAction(chunkUp(2), natstest.Cut)), nil), open: &notRunUnsent},
		{name: "claim-checked request: server restart during its upload", bigReq: true, openBy: settle,
			fault: stream(callerP, fixed(chunkUp(2)), streamAct(doRestart)), open: &notRunUnsent},
		{name: "claim-checked request: a data frame lost", bigReq: true, ran: 1,
			fault: stream(callerP, down3(natstest.Drop), nil), read: ok},

		// Attempts and OperationID apply until the first frame only.
		{name: "Attempts, OperationID: the first request lost before the responder (sent again, runs once)", ran: 1,
			opts:  []shim.StreamOption{shim.Attempts(3), shim.OperationID("op-1"), shim.AttemptTimeout(500 * time.Millisecond)},
			fault: stream(respP, fixed(withAction(reqDelivered, natstest.Drop)), nil), read: ok},
		{name: "Attempts, OperationID: the first start frame delayed past AttemptTimeout (the body read whole once; every attempt reaches the responder)", ran: 3,
			opts: []shim.StreamOption{shim.Attempts(3), shim.OperationID("op-3"), shim.AttemptTimeout(300 * time.Millisecond)},
			fault: stream(callerP, func(e *env) natstest.Rule {
				r := frameDown(e, 'S', 1)
				r.Action, r.Delay = natstest.Delay, 800*time.Millisecond
				return r
			}, nil), read: ok},
		{name: "Attempts, OperationID: claim-checked request, the first request lost before the responder (runs once, nothing left)", bigReq: true, ran: 1,
			opts:  []shim.StreamOption{shim.Attempts(3), shim.OperationID("op-4"), shim.AttemptTimeout(500 * time.Millisecond)},
			fault: stream(respP, fixed(withAction(reqDelivered, natstest.Drop)), nil), read: ok},
		{name: "Attempts, OperationID: server restart mid-stream (never sent again)", ran: 1, orOK: true,
			opts:  []shim.StreamOption{shim.Attempts(3), shim.OperationID("op-2"), shim.StreamIdle(5 * time.Second)},
			fault: stream(callerP, down3(natstest.Cut), streamAct(doRestart)), read: streamBroken},

		{name: "no fault", ran: 1, read: ok},
	})
}

// streamAct adapts a request-row hook action.
func streamAct(a func(e *env, c *call, f natstest.Frame)) func(e *env, c *call, r *sresp, f natstest.Frame) {
	return func(e *env, c *call, _ *sresp, f natstest.Frame) { a(e, c, f) }
}
