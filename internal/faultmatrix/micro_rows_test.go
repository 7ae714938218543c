package faultmatrix_test

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/micro"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// microRow is a row of a nats.go micro endpoint that serves claim checks
// with shim.ResolveMicro and shim.RespondMicroClaimCheck, called by a
// Client with WithClaimChecks.
type microRow struct {
	name     string
	bigReq   bool
	bigReply bool
	deadline time.Duration
	fault    func(e *env, c *call)
	crash    bool // the responder closes its connection instead of replying
	want     wantErr
	orLost   bool // success, or a lost reply (REPLY_LOST): never a wrong body
	orUnres  bool // success (ran 1), or the request unresolved (rejected, ran 0): never a wrong body
	ran      int  // how often the endpoint got past ResolveMicro
	left     int  // objects left once the responder is done; -1: a crash's leftovers
}

func (row microRow) subtest() (string, func(*testing.T)) { return row.name, row.run }

func (row microRow) run(t *testing.T) {
	e := newEnv(t)
	body, want := []byte("request"), []byte("reply")
	if row.bigReq {
		body = payload(bigSize, 1)
	}
	if row.bigReply {
		want = payload(bigSize, 2)
	}
	var runs, entered, finished atomic.Int64
	var wrongReq atomic.Bool
	svc, err := micro.AddService(e.resp, micro.Config{Name: "fm", Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	err = svc.AddEndpoint("op", micro.HandlerFunc(func(req micro.Request) {
		entered.Add(1)
		defer finished.Add(1)
		ctx, cancel := context.WithTimeout(context.Background(), long)
		defer cancel()
		data, err := shim.ResolveMicro(ctx, e.rst, req)
		if err != nil {
			return // answered already
		}
		runs.Add(1)
		if !bytes.Equal(data, body) {
			wrongReq.Store(true)
		}
		if row.crash {
			e.resp.Close()
			return
		}
		_ = shim.RespondMicroClaimCheck(ctx, e.rst, req, want, nil)
	}), micro.WithEndpointSubject(subject))
	if err == nil {
		err = e.resp.Flush()
	}
	if err != nil {
		t.Fatal(err)
	}
	c := newCall(t, row.deadline)
	ctx := c.ctx
	if row.fault != nil {
		row.fault(e, c)
	}
	reply, err := shim.NewClient(e.caller, shim.WithClaimChecks(e.cst)).Request(ctx, subject, body)
	t.Logf("err: %v", err)
	ran := row.ran
	if row.orUnres && err != nil {
		ran = 0
		wantErr{outcome: shim.OutcomeRejected, code: shim.CodeClaimCheckUnresolved, sent: yes}.check(t, err)
	} else if row.orLost && err != nil {
		wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeReplyLost, is: []error{shim.ErrReplyLost}, sent: yes}.check(t, err)
	} else {
		row.want.check(t, err)
	}
	if err == nil && (reply == nil || !bytes.Equal(reply.Data, want)) {
		t.Errorf("success without the %d-byte reply", len(want))
	}
	c.afterCall()
	if e.resp.IsConnected() {
		_ = e.resp.FlushTimeout(5 * time.Second)
	}
	natstest.Eventually(t, settle, func() bool { return runs.Load() >= int64(ran) && finished.Load() == entered.Load() }, "the endpoint to finish")
	if n := int(runs.Load()); n != ran {
		t.Errorf("the endpoint ran %d times, want %d", n, ran)
	}
	if wrongReq.Load() {
		t.Error("ResolveMicro returned a body that is not the request's")
	}
	e.checkLeft(row.left)
	e.checkFaults()
}

// purgeOnDelivery purges the bucket's stream when the request reaches
// the responder: its claim check can no longer be resolved.
func purgeOnDelivery(e *env, _ *call) {
	r := reqDelivered
	r.Hook = func(natstest.Frame) { e.purgeBucket() }
	e.expect(e.rp.On(r))
}

// micro endpoints with ResolveMicro and RespondMicroClaimCheck.
func TestMicro(t *testing.T) {
	t.Parallel()
	runRows(t, []microRow{
		{name: "claim-checked request: its payload gone when it arrives", bigReq: true, ran: 0,
			fault: purgeOnDelivery,
			want:  wantErr{outcome: shim.OutcomeRejected, code: shim.CodeClaimCheckUnresolved, sent: yes}},
		{name: "claim-checked request: responder connection cut during its download", bigReq: true, ran: 1,
			fault: on(respP, withAction(chunkDown(2), natstest.Cut), nil), want: ok},
		{name: "claim-checked request: one chunk of its download lost", bigReq: true, ran: 1, orUnres: true,
			fault: on(respP, withAction(chunkDown(2), natstest.Drop), nil), want: ok},
		{name: "claim-checked reply: ctx cancelled during its upload", bigReply: true, ran: 1,
			fault: on(respP, chunkUp(2), doCancel),
			want:  wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeCanceled, is: []error{context.Canceled}, sent: yes}},
		{name: "claim-checked reply: responder connection cut during its upload", bigReply: true, deadline: 3 * short, ran: 1,
			fault: on(respP, withAction(chunkUp(2), natstest.Cut), nil), want: unknownSent},
		{name: "claim-checked reply: server restart during its upload", bigReply: true, deadline: 3 * short, ran: 1,
			fault: on(respP, chunkUp(2), doRestart), want: unknownSent},
		{name: "claim-checked reply: one chunk of the caller's download lost", bigReply: true, ran: 1, orLost: true,
			fault: on(callerP, withAction(chunkDown(2), natstest.Drop), nil), want: ok},
		{name: "claim-checked reply: responder crashes during its upload", bigReply: true, deadline: short, ran: 1, left: -1,
			fault: on(respP, chunkUp(2), responderCrash), want: unknownTimeout},
		{name: "responder crashes after ResolveMicro", bigReq: true, crash: true, deadline: short, ran: 1, want: unknownTimeout},
		{name: "no fault: claim-checked request and reply", bigReq: true, bigReply: true, ran: 1, want: ok},
		{name: "no fault: small", ran: 1, want: ok},
	})
}
