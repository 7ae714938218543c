package faultmatrix_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/shim"
)

// reqRow is one row of a request path: a Client call against a Handler
// with one fault.
type reqRow struct {
	name     string
	bigReq   bool        // a request above the limit: a claim check (WithClaimChecks)
	bigReply bool        // a reply above the limit: a claim check (WithClaimChecks, ServeClaimChecks)
	plain    bool        // the Client without WithClaimChecks even so
	msg      bool        // RequestMsg with a header of its own instead of Request
	header   nats.Header // that header ({"Trace": {"row"}} unless set)
	late     bool        // the responder subscribes only when the fault says (h.subscribe)
	orLost   bool        // success, or a lost reply (REPLY_LOST, unknown, sent): never a wrong body
	// orAckRaced: the row's cut follows the upload's last message, and the
	// server's acknowledgement can still reach the caller before the link
	// goes: the upload then succeeded and the request went out on the
	// dying link, which is unknown after sending (DEADLINE_EXCEEDED), and
	// the handler ran at most once; never a success or a wrong outcome.
	orAckRaced bool
	check      func(t *testing.T, e *env)
	clientOp   []shim.Option // more Client options
	opts       []shim.CallOption
	deadline   time.Duration // the call's context deadline; long unless set
	beh        behave
	// fault installs the row's fault before the call; it may register
	// functions to run once the call returned (c.then).
	fault func(e *env, c *call)
	want  wantErr
	ran   int  // how often the handler function ran; -1: at least once
	left  int  // objects left in the bucket once the responder is done; -1: a crash's leftovers (TTL)
	fast  bool // the call must end well before its deadline (within settle)
}

// call is the call under test, for faults to act on.
type call struct {
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	then   []func()
}

// after registers f to run once the call returned. Faults may call it
// from proxy hooks.
func (c *call) after(f func()) {
	c.mu.Lock()
	c.then = append(c.then, f)
	c.mu.Unlock()
}

// afterCall runs what faults registered with after.
func (c *call) afterCall() {
	c.mu.Lock()
	fs := c.then
	c.then = nil
	c.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

func (r reqRow) subtest() (string, func(*testing.T)) { return r.name, r.run }

func (r reqRow) run(t *testing.T) {
	e := newEnv(t)
	body := []byte("request")
	if r.bigReq {
		body = payload(bigSize, 1)
	}
	want := []byte("reply")
	if r.bigReply {
		want = payload(bigSize, 2)
	}
	b := r.beh
	if b.reply == nil && b.fn == nil {
		b.reply = want
	}
	if b.json {
		body = []byte(`{"k":"v"}`)
		want, _ = json.Marshal(b.reply)
	}
	h := e.prepare(b)
	if !r.late {
		h.subscribe(t)
	}
	copts := []shim.Option{}
	if (r.bigReq || r.bigReply) && !r.plain {
		copts = append(copts, shim.WithClaimChecks(e.cst))
	}
	client := shim.NewClient(e.caller, append(copts, r.clientOp...)...)
	c := newCall(t, r.deadline)
	ctx := c.ctx
	if r.fault != nil {
		r.fault(e, c)
	}
	start := time.Now()
	var reply *nats.Msg
	var err error
	if r.msg {
		hdr := r.header
		if hdr == nil {
			hdr = nats.Header{"Trace": {"row"}}
		}
		reply, err = client.RequestMsg(ctx, &nats.Msg{Subject: subject, Data: body, Header: hdr}, r.opts...)
	} else {
		reply, err = client.Request(ctx, subject, body, r.opts...)
	}
	took := time.Since(start)
	t.Logf("err: %v", err)
	var se *shim.Error
	raced := r.orAckRaced && errors.As(err, &se) && se.Sent
	switch {
	case raced:
		unknownTimeout.check(t, err)
	case r.orLost && err != nil:
		wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeReplyLost, is: []error{shim.ErrReplyLost}, sent: yes}.check(t, err)
	default:
		r.want.check(t, err)
	}
	if err == nil && (reply == nil || !bytes.Equal(reply.Data, want)) {
		n := -1
		if reply != nil {
			n = len(reply.Data)
		}
		t.Errorf("success with a %d-byte body, want the %d-byte reply", n, len(want))
	}
	if err != nil && reply != nil {
		t.Errorf("an error (%v) and a reply", err)
	}
	if r.fast && took > settle && !raced {
		t.Errorf("the call took %v (deadline %v); it must end within %v", took, r.deadline, settle)
	}
	h.releaseAll()
	c.afterCall()
	h.settle(t)
	runs, ops := h.runs()
	switch {
	case raced && runs > 1:
		t.Errorf("the handler ran %d times, want at most once", runs)
	case raced:
	case r.ran >= 0 && runs != r.ran:
		t.Errorf("the handler ran %d times, want %d", runs, r.ran)
	case r.ran < 0 && runs < 1:
		t.Errorf("the handler never ran")
	}
	for _, op := range ops {
		if op != ops[0] {
			t.Errorf("runs with different operation IDs: %q", ops)
			break
		}
	}
	e.checkLeft(r.left)
	e.checkFaults()
	if r.check != nil {
		r.check(t, e)
	}
}
