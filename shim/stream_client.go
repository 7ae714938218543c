package shim

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/wire"
)

// RequestStream sends data to subject and returns the responder's transfer
// stream. See RequestMsgStream.
func (c *Client) RequestStream(ctx context.Context, subject string, data []byte, opts ...CallOption) (*ReplyStream, error) {
	return c.RequestMsgStream(ctx, &nats.Msg{Subject: subject, Data: data}, opts...)
}

// RequestMsgStream sends m (subject, headers, body; its Reply is ignored)
// to a StreamHandler and returns the reply stream once the responder
// accepted it (its first frame arrived). Read the body from the stream and
// Close it, as an HTTP response body.
//
// The request is checked and sent as RequestMsg sends it (the limit, the
// client's headers, a claim check for a request over the limit with
// WithClaimChecks), plus HeaderStream (protocol version, the caller's
// window and idle bound), and it is sent once. No responders is
// OutcomeNotRun at once; an error reply (the handler failed before it
// wrote anything) is returned as its *Error. m and its Header are not
// modified.
//
// Deadlines: ctx bounds the whole stream (its deadline travels as
// HeaderTimeout, and a stream still open when ctx ends fails with its
// error and tells the responder); the call's Timeout or the client's
// default bounds only the wait for the first frame. Attempts and
// OperationID apply to that wait only: once the first frame arrived the
// stream is never sent again. StreamWindow and StreamIdle set the flow
// control window and the idle bound.
func (c *Client) RequestMsgStream(ctx context.Context, m *nats.Msg, opts ...CallOption) (*ReplyStream, error) {
	if c != nil && c.optErr == nil && m != nil && ctx != nil {
		if t := c.tel.Resolve(); t.Active() {
			return c.requestStreamTraced(ctx, m, opts, t)
		}
	}
	return c.requestMsgStream(ctx, m, opts...)
}

func (c *Client) requestMsgStream(ctx context.Context, m *nats.Msg, opts ...CallOption) (*ReplyStream, error) {
	if err := c.checkCall(ctx, m); err != nil {
		return nil, err
	}
	co, err := callOptions(opts)
	if err != nil {
		return nil, err
	}
	if co.x.window == 0 {
		co.x.window = DefaultStreamWindow
	}
	if co.x.idle == 0 {
		co.x.idle = DefaultStreamIdle
	}
	if err := checkMsg(m.Subject, "", m.Header); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, notSent(ctxCode(err), "context done before sending; not sent", err)
	}
	timeout := c.timeout
	if co.timeout > 0 && co.timeout < timeout {
		timeout = co.timeout
	}
	first := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(first) {
		first = d
	}
	// As Attempts: an attempt waits AttemptTimeout for the first frame
	// before the request is sent again; the last all the time left.
	return runAttempts(ctx, newSchedule(co, first), func(_ int, wait func() time.Duration) (*ReplyStream, bool, error) {
		rs, err := c.openStream(ctx, time.Now().Add(wait()), m, co)
		return rs, false, err
	})
}

// openStream is one send of a stream request, waiting until firstBy for
// the responder's first frame.
func (c *Client) openStream(ctx context.Context, firstBy time.Time, m *nats.Msg, co callOpts) (*ReplyStream, error) {
	switch {
	case c.nc.IsClosed():
		return nil, notSent(CodeUnavailable, "connection closed; not sent", nats.ErrConnectionClosed)
	case c.nc.IsReconnecting():
		return nil, notSent(CodeUnavailable, "connection is reconnecting; not sent", nats.ErrConnectionReconnecting)
	}
	fctx, fcancel := context.WithDeadline(ctx, firstBy)
	defer fcancel()
	req, stored, err := c.streamRequest(ctx, fctx, m, co)
	if err != nil {
		return nil, err
	}
	discard := func() {
		if stored {
			_ = c.store.Discard(ctx, req) // on failure the bucket's TTL removes it
		}
	}
	rs := newReplyStream(ctx, c.nc, co.x.window, co.x.idle)
	req.Reply = c.nc.NewInbox()
	sub, err := c.nc.Subscribe(req.Reply, rs.onMsg)
	if err != nil {
		discard()
		return nil, sendError(ctx, err, false)
	}
	rs.sub.Store(sub)
	var v connlimit.Verdict
	var limit int64
	v, limit, err = c.st.Send(fctx, connlimit.Send{
		Decide: func(limit int64) connlimit.Verdict {
			return connlimit.Decide(int64(MsgSize(req)), c.capLimit(limit), connlimit.NoClaimCheck)
		},
		Write: func() error { return c.nc.PublishMsg(req) },
	})
	if err == nil && v != connlimit.Fits {
		// The limit fell since the request was prepared (a new link).
		err = tooLarge("stream request", int64(MsgSize(req)), c.capLimit(limit), nil)
	}
	if err != nil {
		_ = sub.Unsubscribe()
		discard()
		return nil, sendError(ctx, err, false) // a publish fails only before writing
	}
	select {
	case <-rs.startCh:
	case <-fctx.Done():
	}
	// The responder resolved the request before it answered, or will not
	// be waited for.
	discard()
	if err := rs.begin(); err != nil {
		if err == errNoStart {
			err = sendError(ctx, fctx.Err(), true)
		}
		return nil, err
	}
	return rs, nil
}

// streamRequest builds the request to send: the client's and m's headers,
// HeaderTimeout for the whole stream (none when ctx has no deadline),
// HeaderStream and the operation ID; a claim check when it does not fit
// and the client has a store. stored tells whether a payload was stored.
func (c *Client) streamRequest(ctx, fctx context.Context, m *nats.Msg, co callOpts) (*nats.Msg, bool, error) {
	limit, err := c.Limit(fctx)
	if err != nil {
		return nil, false, err
	}
	d, hasDeadline := ctx.Deadline()
	base, _, err := c.header(m.Header, timeoutMS(time.Until(d)), co.opID)
	if err != nil {
		return nil, false, err
	}
	h := make(nats.Header, len(base)+1)
	for k, v := range base {
		h[k] = v
	}
	if !hasDeadline {
		delete(h, HeaderTimeout)
	}
	h[HeaderStream] = []string{streamMarker(co.x.window, co.x.idle)}
	req := &nats.Msg{Subject: m.Subject, Header: h, Data: m.Data}
	size := int64(wire.HeaderSize(h) + len(m.Data))
	if connlimit.Decide(size, limit, connlimit.NoClaimCheck) == connlimit.Fits {
		return req, false, nil
	}
	if c.store == nil {
		return nil, false, tooLarge("stream request", size, limit, nil)
	}
	ref, err := c.store.PrepareLimit(fctx, req, 0, limit)
	if err != nil {
		return nil, false, uploadError(ctx, req, limit, err)
	}
	return ref, ref != req, nil
}
