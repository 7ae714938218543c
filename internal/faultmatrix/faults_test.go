package faultmatrix_test

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"time"

	"github.com/natssend/natssend/internal/natstest"
)

// The faults rows share. Each returns a reqRow fault.

// cancelBefore cancels the call's context before the call.
func cancelBefore(_ *env, c *call) { c.cancel() }

// dropCaller cuts the caller's link before the call and keeps it down
// until the call returned; restart restarts the server too.
func dropCaller(restart bool) func(e *env, c *call) {
	return func(e *env, c *call) {
		up := down(e.t, e.cp)
		if restart {
			e.restart()
		}
		natstest.Eventually(e.t, settle, func() bool { return !e.caller.IsConnected() }, "the caller to see the disconnect")
		c.after(up)
	}
}

// on installs r on the proxy sel chooses, with a hook made from act.
func on(sel func(*env) *natstest.Proxy, r natstest.Rule, act func(e *env, c *call, f natstest.Frame)) func(e *env, c *call) {
	return func(e *env, c *call) {
		if act != nil {
			r.Hook = func(f natstest.Frame) { act(e, c, f) }
		}
		e.expect(sel(e).On(r))
	}
}

func callerP(e *env) *natstest.Proxy { return e.cp }
func respP(e *env) *natstest.Proxy   { return e.rp }

// Protocol points of a call, as rules.
var (
	// the caller's request reaches the server (After: the server has it)
	reqSent = natstest.Rule{Dir: natstest.ToServer, Subject: subject, When: natstest.After}
	// the caller's request, not yet forwarded
	reqUnsent = natstest.Rule{Dir: natstest.ToServer, Subject: subject}
	// the n-th chunk of an upload, not yet forwarded
	chunkUp = func(n int) natstest.Rule { return natstest.Rule{Dir: natstest.ToServer, Subject: chunks, Nth: n} }
	// the n-th chunk of a download (a direct get's reply, or a
	// consumer's delivery), not yet delivered
	chunkDown = func(n int) natstest.Rule { return natstest.Rule{Dir: natstest.ToClient, Match: isChunk, Nth: n} }
	// a read's request for a batch of chunks (a direct get by subject),
	// not yet forwarded
	batchUp = natstest.Rule{Dir: natstest.ToServer, Subject: "$JS.API.DIRECT.GET.OBJ_" + bucket, Match: func(f natstest.Frame) bool {
		return bytes.Contains(f.Data, []byte(`"next_by_subj"`))
	}}
	// the request delivered to the responder, not yet forwarded
	reqDelivered = natstest.Rule{Dir: natstest.ToClient, Subject: subject}
	// the responder's reply, not yet forwarded
	replyUp = natstest.Rule{Dir: natstest.ToServer, Subject: "_INBOX.>"}
)

// isChunk reports whether f carries a chunk of an object in the bucket:
// a direct get's reply names it in its Nats-Subject header, a consumer
// delivers it on its own subject.
func isChunk(f natstest.Frame) bool {
	return strings.HasPrefix(f.Subject, chunkPrefix) || bytes.Contains(f.Header, []byte("\r\nNats-Subject: "+chunkPrefix))
}

// chunkPrefix begins the subject of every chunk in the bucket.
const chunkPrefix = "$O." + bucket + ".C."

// withAction returns r with action a.
func withAction(r natstest.Rule, a natstest.Action) natstest.Rule { r.Action = a; return r }

// replyDown is the reply delivered to the caller, not yet forwarded.
func replyDown(e *env, a natstest.Action) natstest.Rule {
	return natstest.Rule{Dir: natstest.ToClient, Match: e.replyMsg, Action: a}
}

// Hook actions.

func doCancel(_ *env, c *call, _ natstest.Frame) { c.cancel() }

// waitDeadline stalls the link until the call's deadline has passed. On
// a download, rows drop the chunk too: one delivered at the deadline
// could still complete the read in time.
func waitDeadline(_ *env, c *call, _ natstest.Frame) {
	<-c.ctx.Done()
	// The contexts the call derived from c.ctx end a moment later (a
	// parent's done channel closes before its children are cancelled):
	// hold the frames until they have, so that the fault is a deadline
	// that passes while they are held, not a race with its propagation.
	time.Sleep(50 * time.Millisecond)
}

func doRestart(e *env, _ *call, _ natstest.Frame) { e.restart() }

// callerGone cuts the caller's link and keeps it down until the
// responder is done (at once if it already is: its reply was faster).
func callerGone(e *env, _ *call, _ natstest.Frame) {
	up := down(e.t, e.cp)
	e.h.afterReplyOrNow(up)
}

// responderGone cuts the responder's link and keeps it down until the
// call returned.
func responderGone(e *env, c *call, _ natstest.Frame) {
	c.after(down(e.t, e.rp))
}

// responderCrash cuts the responder's link for good and closes its
// connection, as a crashing process does.
func responderCrash(e *env, _ *call, _ natstest.Frame) {
	e.rp.SetDown(true)
	e.rp.Cut()
	go e.resp.Close()
}

// restartInHandler makes the handler restart the server while it runs,
// with the caller's link down until the responder is done, so that its
// reply cannot reach the caller.
func restartInHandler(e *env, _ *call) {
	e.h.inside(func(context.Context) {
		up := down(e.t, e.cp)
		e.h.afterReply(up)
		e.restart()
	})
}

// cancelInHandler cancels the call's context once the handler function
// runs (after the responder resolved a claim-checked request).
func cancelInHandler(e *env, c *call) {
	e.h.inside(func(context.Context) { c.cancel() })
}

// callerGoneUntilDeadline cuts the caller's link and keeps it down until
// the call's deadline.
func callerGoneUntilDeadline(e *env, c *call, _ natstest.Frame) {
	up := down(e.t, e.cp)
	go func() {
		<-c.ctx.Done()
		up()
	}()
}

// metaAckLost cuts the caller's link in place of the server's
// acknowledgement of the upload's last message (the object's meta, on
// the subject pattern metas): the server has stored the whole object and
// the caller never learns it, the interleaving a cut after the meta races
// with.
func metaAckLost(metas string) func(e *env, _ *call) {
	return func(e *env, _ *call) { cutForMetaAck(e, metas) }
}

func cutForMetaAck(e *env, metas string) {
	var reply atomic.Pointer[string]
	e.expect(e.cp.On(natstest.Rule{Dir: natstest.ToServer, Subject: metas, Hook: func(f natstest.Frame) {
		reply.Store(&f.Reply)
	}}))
	e.expect(e.cp.On(natstest.Rule{Dir: natstest.ToClient, Action: natstest.Cut, Match: func(f natstest.Frame) bool {
		r := reply.Load()
		return r != nil && *r != "" && f.Subject == *r
	}}))
}
