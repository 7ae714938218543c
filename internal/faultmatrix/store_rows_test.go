package faultmatrix_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
)

// lookupUp is a read's first JetStream call, the object's lookup
// (GetInfo: a direct get or a stream message get of its meta data).
var lookupUp = natstest.Rule{Dir: natstest.ToServer, Match: func(f natstest.Frame) bool {
	return strings.HasPrefix(f.Subject, "$JS.API.DIRECT.GET.OBJ_"+bucket) || strings.HasPrefix(f.Subject, "$JS.API.STREAM.MSG.GET.OBJ_"+bucket)
}}

// storeRow is a row of claimcheck.Store, used directly on the caller's
// connection (e.cst).
type storeRow struct {
	name     string
	deadline time.Duration
	fault    func(e *env, c *call)
	run      func(t *testing.T, e *env, ctx context.Context)
}

func (r storeRow) subtest() (string, func(*testing.T)) {
	return r.name, func(t *testing.T) {
		e := newEnv(t)
		c := newCall(t, r.deadline)
		if r.fault != nil {
			r.fault(e, c)
		}
		r.run(t, e, c.ctx)
		c.afterCall()
		e.checkFaults()
	}
}

// isNotPublished checks a publish error that proves nothing was
// published.
func isNotPublished(t *testing.T, err error, more ...error) {
	t.Helper()
	if !errors.Is(err, claimcheck.ErrNotPublished) {
		t.Errorf("err = %v, want one matching ErrNotPublished", err)
	}
	for _, target := range more {
		if !errors.Is(err, target) {
			t.Errorf("errors.Is(err, %v) = false (err: %v)", target, err)
		}
	}
}

// storeReceiver receives ev.> on the admin connection, resolving with the
// row's bucket.
func storeReceiver(e *env) *receiver {
	e.t.Helper()
	r := &receiver{e: e, st: e.ast, ch: make(chan *nats.Msg, 64)}
	if _, err := e.admin.ChanSubscribe("ev.>", r.ch); err != nil {
		e.t.Fatal(err)
	}
	if err := e.admin.Flush(); err != nil {
		e.t.Fatal(err)
	}
	return r
}

// evStream creates the stream EV on ev.> and returns a function that
// counts its messages.
func evStream(t *testing.T, e *env) func() uint64 {
	t.Helper()
	st := createEV(t, e.admin)
	return func() uint64 {
		// The admin connection may still be reconnecting after a restart
		// row: ask again until it answers.
		var info *jetstream.StreamInfo
		natstest.Eventually(t, 15*time.Second, func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			var err error
			info, err = st.Info(ctx)
			return err == nil
		}, "the EV stream's info")
		return info.State.Msgs
	}
}

// publishMsgRow publishes a claim check with Store.PublishMsg and checks
// the error with check, what arrived (recv) and what is left (left).
func publishMsgRow(check func(t *testing.T, err error), recv, left int) func(t *testing.T, e *env, ctx context.Context) {
	return func(t *testing.T, e *env, ctx context.Context) {
		rc := storeReceiver(e)
		data := payload(bigSize, 5)
		err := e.cst.PublishMsg(ctx, &nats.Msg{Subject: "ev.data", Data: data})
		check(t, err)
		rc.check(data, recv)
		e.checkLeft(left)
	}
}

// publishJSRow publishes with Store.PublishJetStream (a claim check when
// big) and checks the error, the stream's messages and the bucket.
func publishJSRow(big bool, check func(t *testing.T, err error), msgs uint64, left int) func(t *testing.T, e *env, ctx context.Context) {
	return func(t *testing.T, e *env, ctx context.Context) {
		count := evStream(t, e)
		data := []byte("event")
		if big {
			data = payload(bigSize, 6)
		}
		_, err := e.cst.PublishJetStream(ctx, &nats.Msg{Subject: "ev.data", Data: data}, jetstream.WithMsgID("m-1"))
		check(t, err)
		natstest.Eventually(t, settle, func() bool { return count() == msgs }, "the stream's messages")
		e.checkLeft(left)
	}
}

func published(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("err = %v, want nil", err)
	}
}

// unknownAck checks the error of a JetStream publish whose
// acknowledgement was lost: it may have been stored.
func unknownAck(t *testing.T, err error) {
	t.Helper()
	if err == nil || errors.Is(err, claimcheck.ErrNotPublished) {
		t.Errorf("err = %v, want an error not matching ErrNotPublished (the stream may have stored it)", err)
	}
}

// refSent cuts the caller's link once the server had the message on
// ev.data.
var refSent = on(callerP, withAction(natstest.Rule{Dir: natstest.ToServer, Subject: "ev.data", When: natstest.After}, natstest.Cut), nil)

// ackLost cuts the caller's link when the stream's acknowledgement of the
// message on ev.data arrives, before it is delivered: the stream stored
// it, the publisher cannot know.
func ackLost(e *env, _ *call) {
	var reply atomic.Value
	reply.Store("")
	e.cp.On(natstest.Rule{Dir: natstest.ToServer, Subject: "ev.data", Every: true, Hook: func(f natstest.Frame) { reply.Store(f.Reply) }})
	e.expect(e.cp.On(natstest.Rule{Dir: natstest.ToClient, Action: natstest.Cut, Match: func(f natstest.Frame) bool {
		r, _ := reply.Load().(string)
		return r != "" && f.Subject == r
	}}))
}

// createEV creates the stream EV on ev.> with nc.
func createEV(t *testing.T, nc *nats.Conn) jetstream.Stream {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "EV", Subjects: []string{"ev.>"}})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// stored prepares a claim check on the admin connection and returns its
// reference and payload.
func stored(t *testing.T, e *env) (*nats.Msg, []byte) {
	t.Helper()
	return preparedIn(t, e.ast, 7)
}

// preparedIn prepares a claim check for ev.data in st and returns its
// reference and payload (of seed).
func preparedIn(t *testing.T, st *claimcheck.Store, seed uint64) (*nats.Msg, []byte) {
	t.Helper()
	data := payload(bigSize, seed)
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	ref, err := st.Prepare(ctx, &nats.Msg{Subject: "ev.data", Data: data}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ref, data
}

// resolveRow resolves a stored claim check on the caller's connection
// (Store.Resolve, or Store.Open and io.ReadAll) and checks the result.
func resolveRow(open bool, check func(t *testing.T, data, want []byte, err error, took time.Duration)) func(t *testing.T, e *env, ctx context.Context) {
	return func(t *testing.T, e *env, ctx context.Context) {
		ref, want := stored(t, e)
		start := time.Now()
		var data []byte
		var err error
		if open {
			var rc io.ReadCloser
			if rc, err = e.cst.Open(ctx, ref); err == nil {
				data, err = io.ReadAll(rc)
				_ = rc.Close()
			}
		} else {
			data, err = e.cst.Resolve(ctx, ref)
		}
		check(t, data, want, err, time.Since(start))
	}
}

// recovers checks a read that must recover from its fault within settle.
func recovers(t *testing.T, data, want []byte, err error, took time.Duration) {
	t.Helper()
	if err != nil || !bytes.Equal(data, want) {
		t.Errorf("read %d bytes, err %v; want the %d bytes stored", len(data), err, len(want))
	}
	if took > settle {
		t.Errorf("the read took %v; it must recover within %v", took, settle)
	}
}

// readFails returns a check of a read that must fail with cause, as a
// transient *ResolveError, returning no data from Resolve.
func readFails(open bool, cause error) func(t *testing.T, data, want []byte, err error, took time.Duration) {
	return func(t *testing.T, data, want []byte, err error, took time.Duration) {
		t.Helper()
		var re *claimcheck.ResolveError
		switch {
		case !errors.Is(err, cause):
			t.Errorf("err = %v, want %v", err, cause)
		case !errors.As(err, &re):
			t.Errorf("err = %v (%T), want a *claimcheck.ResolveError", err, err)
		case re.Permanent():
			t.Errorf("err = %v is Permanent; an interrupted read is not", err)
		}
		if !open && data != nil {
			t.Errorf("Resolve returned %d bytes with its error", len(data))
		}
	}
}

// exactOrTransient checks a read that lost a chunk: the exact payload, or
// a transient error; never other bytes.
func exactOrTransient(t *testing.T, data, want []byte, err error, took time.Duration) {
	t.Helper()
	var re *claimcheck.ResolveError
	switch {
	case err == nil && !bytes.Equal(data, want):
		t.Errorf("read %d bytes that differ from the %d stored, without an error", len(data), len(want))
	case err != nil && (!errors.As(err, &re) || re.Permanent()):
		t.Errorf("err = %v; want the payload or a transient *ResolveError", err)
	}
	if took > settle {
		t.Errorf("the read took %v", took)
	}
}

// claimcheck.Store: PublishMsg, PublishJetStream, Resolve and Open on a
// connection that meets the fault.
func TestStore(t *testing.T) {
	t.Parallel()
	np := func(more ...error) func(t *testing.T, err error) {
		return func(t *testing.T, err error) { t.Helper(); isNotPublished(t, err, more...) }
	}
	runRows(t, []storeRow{
		{name: "PublishMsg: connection cut during the upload", fault: on(callerP, withAction(chunkUp(2), natstest.Cut), nil),
			run: publishMsgRow(np(), 0, 0)},
		{name: "PublishMsg: server restart during the upload", fault: on(callerP, chunkUp(2), doRestart),
			run: publishMsgRow(np(), 0, 0)},
		{name: "PublishMsg: ctx cancelled during the upload", fault: on(callerP, chunkUp(2), doCancel),
			run: publishMsgRow(np(context.Canceled), 0, 0)},
		{name: "PublishMsg: deadline during the upload", deadline: short, fault: on(callerP, chunkUp(2), waitDeadline),
			run: publishMsgRow(np(context.DeadlineExceeded), 0, 0)},
		{name: "PublishMsg: connection cut after the server had the reference", fault: refSent,
			run: publishMsgRow(published, 1, 1)},
		{name: "PublishJetStream: connection cut during the upload", fault: on(callerP, withAction(chunkUp(2), natstest.Cut), nil),
			run: publishJSRow(true, np(), 0, 0)},
		{name: "PublishJetStream: server restart during the upload", fault: on(callerP, chunkUp(2), doRestart),
			run: publishJSRow(true, np(), 0, 0)},
		{name: "PublishJetStream: deadline during the upload", deadline: short, fault: on(callerP, chunkUp(2), waitDeadline),
			run: publishJSRow(true, np(context.DeadlineExceeded), 0, 0)},
		{name: "PublishJetStream: acknowledgement of the reference lost", deadline: short, fault: ackLost,
			run: publishJSRow(true, unknownAck, 1, 1)},
		{name: "PublishJetStream: fits, acknowledgement lost", deadline: short, fault: ackLost,
			run: publishJSRow(false, unknownAck, 1, 0)},
		{name: "PublishJetStream: acknowledgement lost, then sent again with the message ID", deadline: short, fault: ackLost,
			run: func(t *testing.T, e *env, ctx context.Context) {
				publishJSRow(true, unknownAck, 1, 1)(t, e, ctx)
				natstest.Eventually(t, settle, e.caller.IsConnected, "the reconnect")
				ctx2, cancel := context.WithTimeout(context.Background(), long)
				defer cancel()
				ack, err := e.cst.PublishJetStream(ctx2, &nats.Msg{Subject: "ev.data", Data: payload(bigSize, 6)}, jetstream.WithMsgID("m-1"))
				if err != nil || !ack.Duplicate {
					t.Fatalf("the repeat: ack %+v, err %v; want a duplicate", ack, err)
				}
				e.checkLeft(1) // the repeat's payload is deleted, the first one's kept
			}},
		{name: "Resolve: ctx cancelled during the download", fault: on(callerP, withAction(chunkDown(2), natstest.Drop), doCancel),
			run: resolveRow(false, readFails(false, context.Canceled))},
		{name: "Resolve: deadline during the download", deadline: short, fault: on(callerP, withAction(chunkDown(2), natstest.Drop), waitDeadline),
			run: resolveRow(false, readFails(false, context.DeadlineExceeded))},
		{name: "Resolve: server restart at the object's lookup", fault: on(callerP, withAction(lookupUp, natstest.Cut), doRestart),
			run: resolveRow(false, recovers)},
		{name: "Resolve: server restart when the chunks are asked for", fault: on(callerP, withAction(batchUp, natstest.Cut), doRestart),
			run: resolveRow(false, recovers)},
		{name: "Resolve: server restart while chunks are delivered", fault: on(callerP, withAction(chunkDown(2), natstest.Cut), doRestart),
			run: resolveRow(false, recovers)},
		{name: "Resolve: connection cut at the object's lookup", fault: on(callerP, withAction(lookupUp, natstest.Cut), nil),
			run: resolveRow(false, recovers)},
		{name: "Resolve: connection cut when the chunks are asked for", fault: on(callerP, withAction(batchUp, natstest.Cut), nil),
			run: resolveRow(false, recovers)},
		{name: "Resolve: one chunk lost in transit", fault: on(callerP, withAction(chunkDown(2), natstest.Drop), nil),
			run: resolveRow(false, exactOrTransient)},
		{name: "Open: server restart when the chunks are asked for", fault: on(callerP, withAction(batchUp, natstest.Cut), doRestart),
			run: resolveRow(true, recovers)},
		{name: "Open: server restart while chunks are delivered", fault: on(callerP, withAction(chunkDown(3), natstest.Cut), doRestart),
			run: resolveRow(true, recovers)},
		{name: "Open: ctx cancelled while reading", fault: on(callerP, withAction(chunkDown(2), natstest.Drop), doCancel),
			run: resolveRow(true, readFails(true, context.Canceled))},
		{name: "Open: deadline while reading", deadline: short, fault: on(callerP, withAction(chunkDown(2), natstest.Drop), waitDeadline),
			run: resolveRow(true, readFails(true, context.DeadlineExceeded))},
	})
}
