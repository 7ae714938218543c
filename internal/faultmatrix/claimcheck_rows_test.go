package faultmatrix_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

var (
	unknownTimeout = wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeDeadlineExceeded, is: []error{context.DeadlineExceeded, nats.ErrTimeout}, sent: yes}
	unknownSent    = wantErr{outcome: shim.OutcomeUnknown, sent: yes}
	notRunUnsent   = wantErr{outcome: shim.OutcomeNotRun, sent: no}
	ok             = wantErr{outcome: shim.OutcomeOK}
)

// Client.Request with a request above the limit (WithClaimChecks and
// ServeClaimChecks): the request's upload, then the call.
func TestClaimCheckedRequest(t *testing.T) {
	t.Parallel()
	runRows(t, []reqRow{
		{name: "ctx cancelled before the send", bigReq: true, fault: cancelBefore, fast: true,
			want: wantErr{outcome: shim.OutcomeNotRun, code: shim.CodeCanceled, is: []error{context.Canceled}, sent: no}},
		{name: "ctx cancelled during the upload", bigReq: true, fast: true,
			fault: on(callerP, chunkUp(2), doCancel),
			want:  wantErr{outcome: shim.OutcomeNotRun, code: shim.CodeCanceled, is: []error{context.Canceled}, sent: no}},
		{name: "deadline during the upload", bigReq: true, deadline: short,
			fault: on(callerP, chunkUp(2), waitDeadline),
			want:  wantErr{outcome: shim.OutcomeNotRun, code: shim.CodeDeadlineExceeded, is: []error{context.DeadlineExceeded}, sent: no}},
		{name: "caller connection dropped during the upload", bigReq: true, fast: true,
			fault: on(callerP, withAction(chunkUp(2), natstest.Cut), nil), want: notRunUnsent},
		{name: "caller connection dropped after the last chunk reached the server", bigReq: true, fast: true, orAckRaced: true,
			fault: on(callerP, withAction(natstest.Rule{Dir: natstest.ToServer, Subject: metas, When: natstest.After}, natstest.Cut), nil),
			want:  notRunUnsent},
		{name: "caller connection dropped before the acknowledgement of the upload's last message", bigReq: true, fast: true,
			fault: metaAckLost(metas), want: notRunUnsent},
		{name: "server restart during the upload", bigReq: true, fast: true,
			fault: on(callerP, chunkUp(2), doRestart), want: notRunUnsent},
		{name: "ctx cancelled while waiting", bigReq: true, beh: behave{block: true}, ran: 1, fast: true,
			fault: cancelInHandler,
			want:  wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeCanceled, is: []error{context.Canceled}, sent: yes}},
		{name: "deadline while waiting", bigReq: true, beh: behave{stuck: true}, deadline: 2 * short, ran: 1, want: unknownTimeout},
		{name: "server restart while waiting", bigReq: true, deadline: 2 * short, ran: 1, fault: restartInHandler, want: unknownTimeout},
		{name: "caller connection dropped after the server had the request", bigReq: true, beh: behave{stuck: true}, deadline: 2 * short, ran: 1,
			fault: on(callerP, reqSent, callerGoneUntilDeadline), want: unknownTimeout},
		{name: "responder connection dropped when the request is delivered", bigReq: true, deadline: 2 * short, ran: 0,
			fault: on(respP, withAction(reqDelivered, natstest.Cut), responderGone), want: unknownTimeout},
		{name: "responder crashes (connection closed, no reply)", bigReq: true, beh: behave{crash: true}, deadline: 2 * short, ran: 1, want: unknownTimeout},
		{name: "responder without ServeClaimChecks", bigReq: true, beh: behave{plain: true}, fast: true, ran: 0,
			want: wantErr{outcome: shim.OutcomeRejected, code: shim.CodeClaimCheckUnresolved, sent: yes}},
		{name: "no fault", bigReq: true, ran: 1, fast: true, want: ok},
	})
}

// Client.Request with a reply above the limit: the responder's reply
// upload, then the caller's download.
func TestClaimCheckedReply(t *testing.T) {
	t.Parallel()
	replyLost := func(cause error) wantErr {
		return wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeReplyLost, is: []error{shim.ErrReplyLost, cause}, sent: yes}
	}
	runRows(t, []reqRow{
		{name: "ctx cancelled while waiting", bigReply: true, beh: behave{block: true}, ran: 1, fast: true,
			fault: on(callerP, reqSent, doCancel),
			want:  wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeCanceled, is: []error{context.Canceled}, sent: yes}},
		{name: "deadline while waiting, the handler ignores it", bigReply: true, beh: behave{stuck: true}, deadline: short, ran: 1, want: unknownTimeout},
		{name: "ctx cancelled during the reply's upload", bigReply: true, ran: 1, fast: true,
			fault: on(respP, chunkUp(2), doCancel),
			want:  wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeCanceled, is: []error{context.Canceled}, sent: yes}},
		{name: "deadline during the reply's upload", bigReply: true, deadline: short, ran: 1,
			fault: on(respP, chunkUp(2), waitDeadline), want: unknownTimeout},
		{name: "server restart during the reply's upload", bigReply: true, deadline: 3 * short, ran: 1,
			fault: on(respP, chunkUp(2), doRestart), want: unknownSent},
		{name: "caller connection dropped during the reply's upload", bigReply: true, deadline: 2 * short, ran: 1,
			fault: on(respP, chunkUp(2), callerGoneUntilDeadline), want: unknownTimeout},
		{name: "responder connection dropped during the reply's upload", bigReply: true, deadline: 3 * short, ran: 1,
			fault: on(respP, withAction(chunkUp(2), natstest.Cut), nil), want: unknownSent},
		{name: "responder crashes during the reply's upload", bigReply: true, deadline: short, ran: 1, left: -1,
			fault: on(respP, chunkUp(2), responderCrash), want: unknownTimeout},
		{name: "caller connection dropped when the reference arrives", bigReply: true, deadline: short, ran: 1,
			fault: func(e *env, c *call) {
				e.expect(e.cp.On(natstest.Rule{Dir: natstest.ToClient, Match: e.replyMsg, Hook: func(f natstest.Frame) { callerGone(e, c, f) }}))
			}, want: unknownTimeout},
		{name: "ctx cancelled during the download", bigReply: true, ran: 1, fast: true,
			fault: on(callerP, withAction(chunkDown(2), natstest.Drop), doCancel), want: replyLost(context.Canceled)},
		{name: "deadline during the download", bigReply: true, deadline: 2 * short, ran: 1,
			fault: on(callerP, withAction(chunkDown(2), natstest.Drop), waitDeadline), want: replyLost(context.DeadlineExceeded)},
		{name: "server restart when the download starts", bigReply: true, ran: 1, fast: true,
			fault: on(callerP, batchUp, doRestart), want: ok},
		{name: "server restart while chunks are delivered", bigReply: true, ran: 1, fast: true,
			fault: on(callerP, withAction(chunkDown(2), natstest.Cut), doRestart), want: ok},
		{name: "caller connection dropped when the download starts", bigReply: true, ran: 1, fast: true,
			fault: on(callerP, withAction(batchUp, natstest.Cut), nil), want: ok},
		{name: "caller connection dropped while chunks are delivered", bigReply: true, ran: 1, fast: true, orLost: true,
			fault: on(callerP, withAction(chunkDown(2), natstest.Cut), nil), want: ok},
		{name: "one chunk of the download lost", bigReply: true, ran: 1, fast: true, orLost: true,
			fault: on(callerP, withAction(chunkDown(2), natstest.Drop), nil), want: ok},
		{name: "JSONHandler: ctx cancelled while waiting", bigReply: true, beh: behave{block: true, json: true}, ran: 1, fast: true,
			fault: on(callerP, reqSent, doCancel),
			want:  wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeCanceled, is: []error{context.Canceled}, sent: yes}},
		{name: "JSONHandler: server restart when the download starts", bigReply: true, beh: behave{json: true}, ran: 1, fast: true,
			fault: on(callerP, batchUp, doRestart), want: ok},
		{name: "claim-checked request and reply: server restart when the download starts", bigReq: true, bigReply: true, ran: 1, fast: true,
			fault: on(callerP, batchUp, doRestart), want: ok},
		{name: "plain Client sends the accept header (WithHeader)", bigReply: true, plain: true, ran: 1, fast: true,
			clientOp: []shim.Option{shim.WithHeader(shim.HeaderAcceptClaimCheck, bucket)}, want: wantErr{outcome: shim.OutcomeUnknown, sent: yes}},
		{name: "plain Client, RequestMsg carries the accept header", bigReply: true, plain: true, ran: 1, fast: true, msg: true,
			header: nats.Header{shim.HeaderAcceptClaimCheck: {bucket}}, want: wantErr{outcome: shim.OutcomeUnknown, sent: yes}},
		{name: "plain Client, reply too large", bigReply: true, plain: true, ran: 1, fast: true,
			want: wantErr{outcome: shim.OutcomeUnknown, code: shim.CodePayloadTooLarge, is: []error{shim.ErrReplyTooLarge}, sent: yes}},
		{name: "no fault", bigReply: true, ran: 1, fast: true, want: ok},
	})
}
