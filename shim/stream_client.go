package shim

import (
	"context"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/callerr"
	"github.com/natssend/natssend/internal/claimops"
	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/wire"
)

// RequestStream sends data to subject and returns the responder's transfer
// stream. See RequestMsgStream.
func (c *Client) RequestStream(ctx context.Context, subject string, data []byte, opts ...StreamOption) (*ReplyStream, error) {
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
// stream is never sent again. A slow attempt still answers, as in
// Request: the first stream to start, of any attempt within the wait, is
// the call's (the others are closed, which tells their responders to
// stop), and a claim-checked request is stored once per call and deleted
// once the stream is open or the call has failed. StreamWindow and
// StreamIdle set the flow control window and the idle bound.
func (c *Client) RequestMsgStream(ctx context.Context, m *nats.Msg, opts ...StreamOption) (*ReplyStream, error) {
	if c != nil && c.optErr == nil && m != nil && ctx != nil {
		if t := c.tel.Resolve(); t.Active() {
			return c.requestStreamTraced(ctx, m, opts, t)
		}
	}
	return c.requestMsgStream(ctx, m, opts...)
}

func (c *Client) requestMsgStream(ctx context.Context, m *nats.Msg, opts ...StreamOption) (*ReplyStream, error) {
	// The call's deadline bounds the wait for the first frame (first).
	co, first, err := c.setUp(ctx, m, func() (callOpts, error) {
		co, err := streamOptions(opts)
		if co.x.window == 0 {
			co.x.window = DefaultStreamWindow
		}
		if co.x.idle == 0 {
			co.x.idle = DefaultStreamIdle
		}
		return co, err
	})
	if err != nil {
		return nil, err
	}
	o := &streamOpen{c: c, ctx: ctx, m: m, co: co, first: first}
	return o.run()
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
	base, _, err := c.header(m.Header, 1, co.opID) // HeaderTimeout: setStreamTimes
	if err != nil {
		return nil, false, err
	}
	h := make(nats.Header, len(base)+1)
	for k, v := range base {
		h[k] = v
	}
	setStreamTimes(ctx, fctx, h, co)
	req := &nats.Msg{Subject: m.Subject, Header: h, Data: m.Data}
	size := int64(wire.HeaderSize(h) + len(m.Data))
	if connlimit.Decide(size, limit, connlimit.NoClaimCheck) == connlimit.Fits {
		return req, false, nil
	}
	if c.store == nil {
		return nil, false, callerr.TooLarge("stream request", size, limit, nil)
	}
	ref, err := claimops.For(c.store).Prepare(fctx, req, 0, limit, "")
	if err != nil {
		return nil, false, uploadError(ctx, req, limit, err)
	}
	return ref, ref != req, nil
}

// setStreamTimes sets h's HeaderTimeout (the time the stream has left;
// none when ctx has no deadline) and HeaderStream, whose first-frame wait (fctx's
// deadline) tells the responder when its caller stops waiting for it: it
// cannot be told otherwise, since the caller learns the responder's
// control subject from the first frame. The wait is left out when it is
// the stream's own deadline.
func setStreamTimes(ctx, fctx context.Context, h nats.Header, co callOpts) {
	d, hasDeadline := ctx.Deadline()
	if hasDeadline {
		h[HeaderTimeout] = []string{strconv.FormatInt(timeoutMS(time.Until(d)), 10)}
	} else {
		delete(h, HeaderTimeout)
	}
	var wait time.Duration
	if first, ok := fctx.Deadline(); ok && (!hasDeadline || first.Before(d)) {
		wait = time.Until(first)
	}
	h[HeaderStream] = []string{streamMarker(co.x.window, co.x.idle, wait)}
}
