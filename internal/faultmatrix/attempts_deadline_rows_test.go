package faultmatrix_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// loseFirstReply deletes the payload of the first claim-checked reply
// before its reference reaches the caller: the responder ran and stored
// its reply, which cannot be read (REPLY_LOST).
func loseFirstReply(e *env, c *call) {
	e.expect(e.cp.On(natstest.Rule{Dir: natstest.ToClient, Nth: 1,
		Match: func(f natstest.Frame) bool {
			return e.replyMsg(f) && bytes.Contains(f.Header, []byte(claimcheck.HeaderRef+":"))
		},
		Hook: func(f natstest.Frame) {
			ref := &nats.Msg{Subject: f.Subject, Header: parseHeader(f.Header)}
			ctx, cancel := context.WithTimeout(context.Background(), settle)
			defer cancel()
			if err := e.ast.Discard(ctx, ref); err != nil {
				e.t.Errorf("deleting the first reply's payload: %v", err)
			}
		}}))
}

// parseHeader reads a NATS/1.0 header block.
func parseHeader(b []byte) nats.Header {
	h := nats.Header{}
	for _, line := range strings.Split(string(b), "\r\n")[1:] {
		if k, v, ok := strings.Cut(line, ":"); ok {
			h.Add(k, strings.TrimSpace(v))
		}
	}
	return h
}

// Attempts against a per-call Timeout above and below the Client's
// WithTimeout, and a lost claim-checked reply with and without an
// OperationID.
func TestAttemptsDeadlines(t *testing.T) {
	t.Parallel()
	clientShort := []shim.Option{shim.WithTimeout(300 * time.Millisecond)}
	clientLong := []shim.Option{shim.WithTimeout(time.Minute)}
	slow := behave{work: time.Second} // slower than clientShort, well within Timeout(5s)
	above := func(opts ...shim.CallOption) []shim.CallOption { return append(opts, shim.Timeout(5*time.Second)) }
	below := func(opts ...shim.CallOption) []shim.CallOption {
		return append(opts, shim.Timeout(500*time.Millisecond))
	}
	id := shim.OperationID("op-1")
	lost := wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeReplyLost, is: []error{shim.ErrReplyLost, claimcheck.ErrMissing}, sent: yes}
	runRows(t, []reqRow{
		{name: "Timeout above the Client's: no ID", clientOp: clientShort, opts: above(shim.Attempts(3)), beh: slow, ran: 1, fast: true, want: ok},
		{name: "Timeout above the Client's: ID", clientOp: clientShort, opts: above(shim.Attempts(3), id), beh: slow, ran: -1, fast: true, want: ok},
		{name: "Timeout above the Client's: claim-checked request, ID", bigReq: true, clientOp: clientShort, opts: above(shim.Attempts(3), id),
			beh: slow, ran: -1, fast: true, want: ok},
		{name: "Timeout above the Client's: claim-checked reply, no ID", bigReply: true, clientOp: clientShort, opts: above(shim.Attempts(3)),
			beh: slow, ran: 1, fast: true, want: ok},
		{name: "Timeout below the Client's: no ID", clientOp: clientLong, opts: below(shim.Attempts(3)), beh: behave{stuck: true}, ran: 1, fast: true,
			want: unknownTimeout},
		{name: "Timeout below the Client's: ID", clientOp: clientLong, opts: below(shim.Attempts(3), id), beh: behave{stuck: true}, ran: 1, fast: true,
			want: unknownTimeout},
		{name: "Timeout below the Client's: claim-checked request, ID", bigReq: true, clientOp: clientLong, opts: below(shim.Attempts(3), id),
			beh: behave{stuck: true}, ran: 1, fast: true, want: unknownTimeout},
		{name: "REPLY_LOST, ID: sent again", bigReply: true, opts: []shim.CallOption{shim.Attempts(3), id}, fault: loseFirstReply, ran: 2, fast: true, want: ok},
		{name: "REPLY_LOST, ID, claim-checked request: sent again as the same reference", bigReq: true, bigReply: true,
			opts: []shim.CallOption{shim.Attempts(3), id}, ran: 2, fast: true, want: ok,
			fault: func(e *env, c *call) {
				loseFirstReply(e, c)
				e.counter = e.cp.On(natstest.Rule{Dir: natstest.ToServer, Subject: metas, Every: true})
			},
			check: uploadedOnce},
		{name: "REPLY_LOST, no ID: the call ends", bigReply: true, opts: []shim.CallOption{shim.Attempts(3)}, fault: loseFirstReply, ran: 1, fast: true, want: lost},
	})
}
