package faultmatrix_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// receiver subscribes to ev.> on the admin connection and resolves what
// arrives with a Store of the default bucket.
type receiver struct {
	e  *env
	st *claimcheck.Store
	ch chan *nats.Msg
}

func newReceiver(e *env) *receiver {
	e.t.Helper()
	js, err := jetstream.New(e.admin)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	st, err := claimcheck.New(ctx, js)
	if err != nil {
		e.t.Fatal(err)
	}
	r := &receiver{e: e, st: st, ch: make(chan *nats.Msg, 64)}
	if _, err := e.admin.ChanSubscribe("ev.>", r.ch); err != nil {
		e.t.Fatal(err)
	}
	if err := e.admin.Flush(); err != nil {
		e.t.Fatal(err)
	}
	return r
}

// check waits until everything the caller sent before now has arrived
// (a marker published on the caller's connection comes after it; a
// marker lost on a link that was cut is sent again) and checks that n
// messages on ev.data arrived, each resolving to want.
func (r *receiver) check(want []byte, n int) {
	t := r.e.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), settle)
	defer cancel()
	got := 0
	for {
		natstest.Eventually(t, settle, r.e.caller.IsConnected, "the caller to be connected")
		_ = shim.PublishContext(ctx, r.e.caller, "ev.marker", nil)
		wait := time.NewTimer(500 * time.Millisecond)
	recv:
		for {
			select {
			case m := <-r.ch:
				if m.Subject == "ev.marker" {
					wait.Stop()
					if got != n {
						t.Errorf("received %d messages, want %d", got, n)
					}
					return
				}
				got++
				data, err := r.st.Resolve(ctx, m)
				if err != nil || !bytes.Equal(data, want) {
					t.Errorf("received a message that resolves to %d bytes (err %v), want the %d bytes sent", len(data), err, len(want))
				}
			case <-wait.C:
				break recv // the marker was lost with its link: send another
			case <-ctx.Done():
				t.Fatal("no marker arrived")
			}
		}
	}
}

// pubRow is a row of shim.Publish*.
type pubRow struct {
	name     string
	big      bool // above the limit: refused
	noCtx    bool // shim.PublishMsg
	deadline time.Duration
	fault    func(e *env, c *call)
	want     wantErr
	recv     int // messages received
	left     int // objects left in the default bucket
}

func (r pubRow) subtest() (string, func(*testing.T)) { return r.name, r.run }

func (r pubRow) run(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(e)
	data := []byte("event")
	if r.big {
		data = payload(bigSize, 3)
	}
	c := newCall(t, r.deadline)
	ctx := c.ctx
	if r.fault != nil {
		r.fault(e, c)
	}
	m := &nats.Msg{Subject: "ev.data", Data: data, Header: nats.Header{"Trace": {"row"}}}
	var err error
	if r.noCtx {
		err = shim.PublishMsg(e.caller, m)
	} else {
		err = shim.PublishMsgContext(ctx, e.caller, m)
	}
	r.want.check(t, err)
	t.Logf("err: %v", err)
	c.afterCall()
	rc.check(data, r.recv)
	checkLeftIn(t, rc.st, r.left)
	e.checkFaults()
}

// shim.Publish, PublishMsg and PublishMsgContext: a message that fits is
// sent; one over the limit is refused and nothing is stored (claim checks
// are made only through a Store: TestStore).
func TestPublish(t *testing.T) {
	t.Parallel()
	unavailable := wantErr{outcome: shim.OutcomeNotRun, code: shim.CodeUnavailable, is: []error{nats.ErrConnectionReconnecting}, sent: no}
	tooLarge := wantErr{outcome: shim.OutcomeNotRun, code: shim.CodePayloadTooLarge, is: []error{shim.ErrPayloadTooLarge, nats.ErrMaxPayload}, sent: no}
	rows := []pubRow{
		{name: "fits: ctx cancelled before the send", fault: cancelBefore,
			want: wantErr{outcome: shim.OutcomeNotRun, code: shim.CodeCanceled, is: []error{context.Canceled}, sent: no}},
		{name: "fits: deadline passed before the send", deadline: time.Nanosecond,
			want: wantErr{outcome: shim.OutcomeNotRun, code: shim.CodeDeadlineExceeded, is: []error{context.DeadlineExceeded}, sent: no}},
		{name: "fits: caller connection dropped before the send", fault: dropCaller(false), want: unavailable},
		{name: "fits: server restart before the send", fault: dropCaller(true), want: unavailable},
		{name: "fits: caller connection dropped after the server had it", recv: 1, want: ok,
			fault: on(callerP, withAction(natstest.Rule{Dir: natstest.ToServer, Subject: "ev.data", When: natstest.After}, natstest.Cut), nil)},
		{name: "over the limit: refused, nothing stored", big: true, want: tooLarge},
		{name: "PublishMsg: over the limit: refused, nothing stored", big: true, noCtx: true, want: tooLarge},
		{name: "over the limit: ctx cancelled before the send", big: true, fault: cancelBefore,
			want: wantErr{outcome: shim.OutcomeNotRun, code: shim.CodeCanceled, is: []error{context.Canceled}, sent: no}},
		{name: "over the limit: caller connection dropped before the send", big: true, fault: dropCaller(false), want: unavailable},
		{name: "over the limit: server restart before the send", big: true, fault: dropCaller(true), want: unavailable},
	}
	runRows(t, rows)
}
