package faultmatrix_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// manyRow is a row of Client.RequestMany: voters responders (each its
// own subscription, not a queue group) answer "r<i>"; the first one
// rejects when reject is set.
type manyRow struct {
	name     string
	voters   int
	reject   bool
	deadline time.Duration
	opts     []shim.ManyOption
	fault    func(e *env, c *call, done <-chan struct{}) // done: closed once the range loop ended
	onReply  func(c *call, n int)                        // runs in the loop after the n-th item
	replies  int                                         // good replies yielded
	remote   int                                         // responders' error replies yielded (*shim.Error, Remote)
	want     *wantErr                                    // the one other error yielded; nil: none
	ran      int                                         // requests the responders handled (the request is sent once)
	fast     bool                                        // ends well before the deadline
}

func (row manyRow) subtest() (string, func(*testing.T)) { return row.name, row.run }

func (row manyRow) run(t *testing.T) {
	e := newEnv(t)
	var runs, entered, finished atomic.Int64
	for i := range row.voters {
		h := shim.Handler(func(context.Context, *nats.Msg) ([]byte, error) {
			runs.Add(1)
			if i == 0 && row.reject {
				return nil, shim.Reject("BUSY", "not now")
			}
			return fmt.Appendf(nil, "r%d", i), nil
		}, shim.Conn(e.resp))
		if _, err := e.resp.Subscribe(subject, func(m *nats.Msg) { entered.Add(1); h(m); finished.Add(1) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.resp.Flush(); err != nil {
		t.Fatal(err)
	}
	c := newCall(t, row.deadline)
	ctx := c.ctx
	done := make(chan struct{})
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			close(done)
		}
	})
	if row.fault != nil {
		row.fault(e, c, done)
	}
	client := shim.NewClient(e.caller)
	start := time.Now()
	seen := map[string]bool{}
	var replies, remote int
	var errs []error
	n := 0
	for m, err := range client.RequestMany(ctx, subject, []byte("status?"), row.opts...) {
		n++
		var se *shim.Error
		switch {
		case err == nil && m == nil:
			t.Errorf("item %d: a nil reply without an error", n)
		case err == nil:
			if seen[string(m.Data)] {
				t.Errorf("reply %q yielded twice", m.Data)
			}
			seen[string(m.Data)] = true
			replies++
		case m != nil:
			t.Errorf("item %d: a reply and an error (%v)", n, err)
		case errors.As(err, &se) && se.Remote:
			remote++
			if se.Code != "BUSY" || shim.Classify(err) != shim.OutcomeRejected {
				t.Errorf("the responder's error reply: %v (Code %s, %v); want BUSY, rejected", err, se.Code, shim.Classify(err))
			}
		default:
			errs = append(errs, err)
		}
		if row.onReply != nil {
			row.onReply(c, n)
		}
	}
	took := time.Since(start)
	close(done)
	t.Logf("%d replies, %d error replies, errors %v, in %v", replies, remote, errs, took)
	if replies != row.replies || remote != row.remote {
		t.Errorf("%d replies and %d error replies (%q), want %d and %d", replies, remote, keys(seen), row.replies, row.remote)
	}
	switch {
	case row.want == nil && len(errs) > 0:
		t.Errorf("errors %v, want none", errs)
	case row.want != nil && len(errs) != 1:
		t.Errorf("errors %v, want exactly one", errs)
	case row.want != nil:
		row.want.check(t, errs[0])
	}
	if row.fast && took > settle {
		t.Errorf("the collection took %v (deadline %v); it must end within %v", took, row.deadline, settle)
	}
	c.afterCall()
	if e.resp.IsConnected() {
		_ = e.resp.FlushTimeout(5 * time.Second)
	}
	// The request may still be on its way to the responders when the
	// collection ended (a cancel): wait for the runs the row expects.
	natstest.Eventually(t, settle, func() bool { return runs.Load() >= int64(row.ran) && finished.Load() == entered.Load() }, "the responders to finish")
	if got := int(runs.Load()); got != row.ran {
		t.Errorf("the responders handled %d requests, want %d (the request is sent once)", got, row.ran)
	}
	e.checkFaults()
}

func keys(m map[string]bool) []string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	return s
}

// manyOn installs rule on the caller's proxy as one of the row's faults.
func manyOn(rule func(e *env) natstest.Rule) func(e *env, c *call, done <-chan struct{}) {
	return func(e *env, _ *call, _ <-chan struct{}) { e.expect(e.cp.On(rule(e))) }
}

// nthReply is the n-th reply to the caller's request, not yet delivered.
func nthReply(e *env, n int, a natstest.Action) natstest.Rule {
	r := replyDown(e, a)
	r.Nth = n
	return r
}

// Client.RequestMany: scatter-gather under faults.
func TestRequestMany(t *testing.T) {
	t.Parallel()
	stall := shim.StallTimeout(500 * time.Millisecond)
	runRows(t, []manyRow{
		{name: "ctx cancelled before the send", voters: 1, fast: true,
			fault: func(_ *env, c *call, _ <-chan struct{}) { c.cancel() },
			want:  &wantErr{outcome: shim.OutcomeNotRun, code: shim.CodeCanceled, is: []error{context.Canceled}, sent: no}},
		{name: "caller connection dropped before the send", voters: 1, fast: true,
			fault: func(e *env, c *call, _ <-chan struct{}) { dropCaller(false)(e, c) },
			want:  &wantErr{outcome: shim.OutcomeNotRun, code: shim.CodeUnavailable, is: []error{nats.ErrConnectionReconnecting}, sent: no}},
		{name: "no responders: not run, at once", fast: true,
			fault: manyOn(func(e *env) natstest.Rule { return natstest.Rule{Dir: natstest.ToClient, Match: e.noResponders} }),
			want:  &wantErr{outcome: shim.OutcomeNotRun, code: shim.CodeNoResponders, is: []error{nats.ErrNoResponders}, sent: yes}},
		{name: "a reply lost (MaxReplies, ends at the deadline)", voters: 3, deadline: short, ran: 3, replies: 2,
			opts: []shim.ManyOption{shim.MaxReplies(3)}, fault: manyOn(func(e *env) natstest.Rule { return nthReply(e, 1, natstest.Drop) })},
		{name: "a reply lost (StallTimeout)", voters: 3, ran: 3, replies: 2, fast: true,
			opts: []shim.ManyOption{stall}, fault: manyOn(func(e *env) natstest.Rule { return nthReply(e, 2, natstest.Drop) })},
		{name: "every reply lost: unknown at the deadline", voters: 2, deadline: short, ran: 2, want: &unknownTimeout,
			fault: manyOn(func(e *env) natstest.Rule { r := nthReply(e, 1, natstest.Drop); r.Every = true; return r })},
		{name: "a responder's error reply among good ones", voters: 3, reject: true, ran: 3, replies: 2, remote: 1, fast: true,
			opts: []shim.ManyOption{shim.MaxReplies(3)},
			fault: manyOn(func(e *env) natstest.Rule {
				return natstest.Rule{Dir: natstest.ToClient, Match: func(f natstest.Frame) bool { return e.replyMsg(f) && f.HasHeader(shim.HeaderErrorCode) }}
			})},
		{name: "ctx cancelled mid-iteration", voters: 3, ran: 3, replies: 1, fast: true,
			onReply: func(c *call, n int) {
				if n == 1 {
					c.cancel()
				}
			},
			// The later replies wait in the proxy until the loop ended, if
			// they reach it at all: the loop's end unsubscribes the inbox,
			// so the server may drop them first (not an expected fault).
			fault: func(e *env, _ *call, done <-chan struct{}) {
				e.cp.On(withHook(nthReply(e, 2, natstest.Pass), func(natstest.Frame) { waitClosed(e.t, done) }))
			}},
		{name: "ctx cancelled while waiting for the first reply", voters: 1, ran: 1, fast: true,
			fault: func(e *env, c *call, _ <-chan struct{}) {
				e.expect(e.cp.On(withHook(reqSent, func(natstest.Frame) { c.cancel() })))
				e.cp.On(natstest.Rule{Dir: natstest.ToClient, Match: e.replyMsg, Every: true, Action: natstest.Drop})
			},
			want: &wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeCanceled, is: []error{context.Canceled}, sent: yes}},
		{name: "caller connection cut while collecting (not sent again)", voters: 2, ran: 2, replies: 1, fast: true,
			opts: []shim.ManyOption{shim.StallTimeout(2 * time.Second)}, fault: manyOn(func(e *env) natstest.Rule { return nthReply(e, 2, natstest.Cut) })},
		{name: "caller connection cut before any reply: unknown at the deadline", voters: 1, deadline: short, ran: 1, want: &unknownTimeout,
			fault: manyOn(func(e *env) natstest.Rule { return nthReply(e, 1, natstest.Cut) })},
		{name: "no fault", voters: 3, ran: 3, replies: 3, fast: true, opts: []shim.ManyOption{shim.MaxReplies(3)}},
	})
}

// withHook returns r with hook h.
func withHook(r natstest.Rule, h func(natstest.Frame)) natstest.Rule { r.Hook = h; return r }

// waitClosed waits for ch, at most settle.
func waitClosed(t *testing.T, ch <-chan struct{}) {
	select {
	case <-ch:
	case <-time.After(settle):
		t.Errorf("not closed within %v", settle)
	}
}
