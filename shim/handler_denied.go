package shim

import (
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/connlimit"
)

// maxWatchedReplies bounds the recent reply subjects a handler remembers
// to tell OnError of a reply the server refused (see replyWatch).
const maxWatchedReplies = 1024

// replyWatch tells a handler's OnError when the server refuses one of its
// replies (the responder's user may not publish to the reply subject:
// allow_responses missing or spent): nats.go's publish succeeds, and the
// server says so only on the connection's asynchronous error callback, so
// without it the responder would never know that its caller got nothing.
// It remembers the reply subjects of the last maxWatchedReplies requests;
// it exists only for a handler with OnError on a connection made by
// Connect (see Conn).
type replyWatch struct {
	mu     sync.Mutex
	reqs   map[string]*nats.Msg
	order  []string
	report func(req *nats.Msg, err error)
}

// newReplyWatch returns the watch for a handler on st's connection, or nil
// when nothing would be told (no OnError, or a connection that does not
// report violations).
func newReplyWatch(st *connlimit.State, report func(*nats.Msg, error), onError bool) *replyWatch {
	if st == nil || !onError || !st.Hooked() {
		return nil
	}
	w := &replyWatch{reqs: make(map[string]*nats.Msg), report: report}
	// The watch lasts as long as the connection: a handler is made once
	// per subscription and has no end of its own.
	_ = st.Listen(w.denied)
	return w
}

// add remembers req, whose reply is about to be sent: its subject, reply
// subject and headers, for OnError, not its body (a thousand large
// requests would otherwise stay in memory).
func (w *replyWatch) add(req *nats.Msg) {
	if w == nil || req.Reply == "" {
		return
	}
	req = &nats.Msg{Subject: req.Subject, Reply: req.Reply, Header: req.Header}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.reqs[req.Reply]; !ok {
		if len(w.order) == maxWatchedReplies {
			delete(w.reqs, w.order[0])
			w.order = w.order[1:]
		}
		w.order = append(w.order, req.Reply)
	}
	w.reqs[req.Reply] = req
}

func (w *replyWatch) denied(d *connlimit.Denial) {
	if d.Op != "publish" {
		return
	}
	w.mu.Lock()
	req, ok := w.reqs[d.Subject]
	delete(w.reqs, d.Subject)
	w.mu.Unlock()
	if ok {
		w.report(req, mayHaveRun(CodePermissionDenied, d.Error()+": the server refused the reply, so the caller gets none and cannot tell whether the request ran (the responder's user needs allow_responses or publish permission on the caller's inbox)", d))
	}
}
