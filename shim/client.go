package shim

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/wire"
)

// DefaultTimeout is a Client's deadline for calls whose context has none
// and that set no Timeout.
const DefaultTimeout = 10 * time.Second

// Option configures a Client.
type Option func(*Client)

// WithTimeout sets the client's default deadline per call (DefaultTimeout
// if not set). Non-positive values are ignored.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// WithPayloadCap caps requests at n bytes (header block + body), below the
// connection's max_payload. The lower of the two applies. Non-positive
// values are ignored.
func WithPayloadCap(n int64) Option {
	return func(c *Client) {
		if n > 0 {
			c.payloadCap = n
		}
	}
}

// WithHeader adds a header sent with every request, such as an
// authorization token. It counts against the limit like any header. A
// request's own header of the same key replaces it.
func WithHeader(key, value string) Option {
	return func(c *Client) {
		if c.static == nil {
			c.static = nats.Header{}
		}
		c.static.Add(key, value)
	}
}

// CallOption configures one call.
type CallOption func(*callOpts)

type callOpts struct {
	timeout time.Duration
}

// Timeout sets this call's timeout. The call's deadline is the earliest of
// the context's deadline, this timeout and the client's default.
func Timeout(d time.Duration) CallOption {
	return func(o *callOpts) { o.timeout = d }
}

// Client sends requests with a size cap, one deadline and no replay. It is
// safe for concurrent use; concurrent calls share the connection.
//
// Every call sends at most once. When a call fails, Classify (or the
// returned *Error's Outcome) tells whether the request certainly did not
// run (safe to send again) or may have run (reconcile before anything
// else). The Client never retries on its own.
type Client struct {
	nc         *nats.Conn
	timeout    time.Duration
	payloadCap int64
	static     nats.Header
	limit      connlimit.Tracker
	shared     atomic.Pointer[sharedHeader]
}

// NewClient returns a Client that sends on nc. Use a connection from
// Connect: one made otherwise may buffer requests while reconnecting and
// deliver them after their deadline.
func NewClient(nc *nats.Conn, opts ...Option) *Client {
	c := &Client{nc: nc, timeout: DefaultTimeout}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	return c
}

// Limit returns the number of bytes (header block + body) a request may
// have now: the lower of the payload cap and the connection's effective
// max_payload.
func (c *Client) Limit(ctx context.Context) (int64, error) {
	limit, err := c.limit.MaxPayload(ctx, c.nc)
	if err != nil {
		// Nothing but a PING was sent.
		return 0, sendError(ctx, err, false)
	}
	if c.payloadCap > 0 && c.payloadCap < limit {
		limit = c.payloadCap
	}
	return limit, nil
}

// Request sends data to subject and waits for one reply. See RequestMsg.
func (c *Client) Request(ctx context.Context, subject string, data []byte, opts ...CallOption) (*nats.Msg, error) {
	return c.RequestMsg(ctx, &nats.Msg{Subject: subject, Data: data}, opts...)
}

// RequestMsg sends m (its subject, headers and body; its Reply is ignored)
// and waits for one reply.
//
// The whole request counts against the limit: body, m's headers, the
// client's static headers and the HeaderTimeout header the client adds. A
// request over the limit is not sent: the error is a *Error with Code
// CodePayloadTooLarge (errors.Is(err, ErrPayloadTooLarge)) stating size and
// limit. m and its Header are not modified.
//
// The call has one deadline, the earliest of ctx's, the call's Timeout and
// the client's default; it travels with the request (HeaderTimeout). The
// request is sent at most once. A reply with micro error headers is
// returned as a *Error (Remote true) whatever its body; a reply with
// neither body nor error headers is a valid empty success.
//
// Errors keep their nats.go and context identities: errors.Is works with
// nats.ErrTimeout and context.DeadlineExceeded (no reply in time),
// nats.ErrNoResponders, nats.ErrConnectionClosed,
// nats.ErrConnectionReconnecting and context.Canceled.
func (c *Client) RequestMsg(ctx context.Context, m *nats.Msg, opts ...CallOption) (*nats.Msg, error) {
	if m == nil {
		return nil, notSent(CodeInvalidArgument, "nil message; not sent", nats.ErrInvalidMsg)
	}
	if ctx == nil {
		return nil, notSent(CodeInvalidArgument, "nil context; not sent", nats.ErrInvalidContext)
	}
	if err := ctx.Err(); err != nil {
		return nil, notSent(ctxCode(err), "context done before sending; not sent", err)
	}
	var co callOpts
	if len(opts) > 0 {
		co = applyCallOpts(opts)
	}
	now := time.Now()
	timeout := c.timeout
	if co.timeout > 0 && co.timeout < timeout {
		timeout = co.timeout
	}
	deadline := now.Add(timeout)
	callCtx := ctx
	if d, ok := ctx.Deadline(); !ok || deadline.Before(d) {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	} else {
		deadline = d
	}

	switch {
	case c.nc == nil:
		return nil, notSent(CodeInvalidArgument, "nil connection; not sent", nats.ErrInvalidConnection)
	case c.nc.IsClosed():
		return nil, notSent(CodeUnavailable, "connection closed; not sent", nats.ErrConnectionClosed)
	case c.nc.IsReconnecting():
		return nil, notSent(CodeUnavailable, "connection is reconnecting; not sent", nats.ErrConnectionReconnecting)
	}
	limit, err := c.Limit(callCtx)
	if err != nil {
		return nil, err
	}

	// What is left after the limit check, which may have taken a round trip.
	remaining := time.Until(deadline)
	ms := (remaining + time.Millisecond - 1) / time.Millisecond
	if ms < 1 {
		ms = 1
	}
	hdr, hdrSize, err := c.header(m.Header, int64(ms))
	if err != nil {
		return nil, err
	}
	req := nats.Msg{Subject: m.Subject, Data: m.Data, Header: hdr}
	if size := int64(hdrSize + len(m.Data)); size > limit {
		return nil, tooLarge("request", size, limit, nil)
	}

	reply, err := c.nc.RequestMsgWithContext(callCtx, &req)
	if err != nil {
		return nil, sendError(ctx, err, true)
	}
	if rerr := remoteError(reply); rerr != nil {
		return nil, rerr
	}
	return reply, nil
}

// header returns the header map to send and its wire size: the client's
// static headers, then the request's own, then the timeout header. The
// caller's map is not modified.
//
// Requests without headers of their own and with the same timeout (every
// call that takes the client's default) share one read-only map: nats.go
// only reads a message's header while it sends it.
func (c *Client) header(own nats.Header, timeoutMS int64) (nats.Header, int, error) {
	if len(own) == 0 {
		if t := c.shared.Load(); t != nil && t.ms == timeoutMS {
			return t.h, t.size, nil
		}
	}
	h := make(nats.Header, len(c.static)+len(own)+1)
	for k, v := range c.static {
		h[k] = v
	}
	for k, v := range own {
		h[k] = v
	}
	h[HeaderTimeout] = []string{strconv.FormatInt(timeoutMS, 10)}
	if k, bad := wire.InvalidHeaderKey(h); bad {
		return nil, 0, notSent(CodeInvalidArgument, fmt.Sprintf("invalid header key %q; not sent", k), nats.ErrBadHeaderMsg)
	}
	size := wire.HeaderSize(h)
	if len(own) == 0 {
		c.shared.Store(&sharedHeader{ms: timeoutMS, h: h, size: size})
	}
	return h, size, nil
}

// sharedHeader is a header map shared by requests; never modified once
// stored.
type sharedHeader struct {
	ms   int64
	h    nats.Header
	size int
}

func applyCallOpts(opts []CallOption) callOpts {
	var co callOpts
	for _, o := range opts {
		if o != nil {
			o(&co)
		}
	}
	return co
}

func ctxCode(err error) string {
	if err == context.Canceled {
		return CodeCanceled
	}
	return CodeDeadlineExceeded
}
