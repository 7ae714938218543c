package shim

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/callerr"
	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/telemetry"
	"github.com/natssend/natssend/internal/wire"
)

// Option configures a Client (a client-level option). NewClient cannot
// fail, so an invalid value makes every call of the Client fail with its
// error, which wraps ErrInvalidOption (Client.Err reports it at once).
type Option func(*Client) error

// WithTimeout is a client-level Option: it sets the timeout of every call
// of the Client that sets no Timeout of its own (DefaultTimeout if not
// set). A call's Timeout replaces it, longer or shorter; a context's
// deadline bounds every call (the earlier of the two applies). It must be
// positive.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) error {
		if d <= 0 {
			return invalidOption("WithTimeout(%v): the timeout must be positive", d)
		}
		c.timeout = d
		return nil
	}
}

// WithPayloadCap caps requests at n bytes (header block + body), below the
// connection's max_payload. The lower of the two applies. It must be
// positive.
func WithPayloadCap(n int64) Option {
	return func(c *Client) error {
		if n <= 0 {
			return invalidOption("WithPayloadCap(%d): the cap must be positive", n)
		}
		c.payloadCap = n
		return nil
	}
}

// WithHeader adds a header sent with every request, such as an
// authorization token. It counts against the limit like any header. A
// request's own header of the same key replaces it. The key must be one
// nats.go sends (printable ASCII without separators).
func WithHeader(key, value string) Option {
	return func(c *Client) error {
		if !wire.ValidHeaderKey(key) {
			return invalidOption("WithHeader(%q): invalid header key", key)
		}
		if c.static == nil {
			c.static = nats.Header{}
		}
		c.static.Add(key, value)
		return nil
	}
}

// Client sends requests with a size cap, one deadline and no replay. It is
// safe for concurrent use; concurrent calls share the connection.
//
// Every call sends at most once unless it asks for more with Attempts
// (which sends again only what is safe to: see Attempts and OperationID).
// When a call fails, Classify (or the returned *Error's Outcome) tells
// whether the request certainly did not run (safe to send again) or may
// have run (reconcile before anything else). The Client never retries on
// its own.
type Client struct {
	nc         *nats.Conn
	timeout    time.Duration
	payloadCap int64
	static     nats.Header
	st         *connlimit.State  // nil when nc is nil
	optErr     error             // the first invalid option
	store      *claimcheck.Store // WithClaimChecks; nil without
	shared     atomic.Pointer[sharedHeader]
	limText    atomic.Pointer[limitString] // HeaderMaxPayload's last value
	tel        *telemetry.Config           // telemetry options; nil: the globals
}

// NewClient returns a Client that sends on nc. Use a connection from
// Connect: one made otherwise may buffer requests while reconnecting and
// deliver them after their deadline.
func NewClient(nc *nats.Conn, opts ...Option) *Client {
	c := &Client{nc: nc, timeout: DefaultTimeout}
	if nc != nil {
		c.st = connlimit.For(nc)
	}
	if err := applyOptions(c, opts); err != nil {
		c.optErr = err
	}
	c.fixStatic()
	c.tel.Fix()
	return c
}

// Err reports the Client's first invalid option (an error wrapping
// ErrInvalidOption), or nil. Every call of a Client with an invalid option
// fails with it.
func (c *Client) Err() error {
	if c == nil {
		return notSent(CodeInvalidArgument, "nil Client; not sent", nats.ErrInvalidConnection)
	}
	if c.optErr != nil {
		return c.optErr
	}
	return nil
}

// Limit returns the number of bytes (header block + body) a request may
// have now: the lower of the payload cap and the connection's effective
// max_payload (the connection's one limit state, shared with every other
// natssend sender on it).
func (c *Client) Limit(ctx context.Context) (int64, error) {
	if err := c.Err(); err != nil {
		return 0, err
	}
	if err := checkInputs(ctx, c.nc, nil, false); err != nil {
		return 0, err
	}
	limit, err := c.st.Limit(ctx)
	if err != nil {
		// Nothing but a PING was sent.
		return 0, callerr.SendError(ctx, err, false)
	}
	return c.capLimit(limit), nil
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
// The call has one deadline, the earlier of ctx's and the call's Timeout
// (the client's WithTimeout when the call sets none); it travels with the request (HeaderTimeout). The
// request is sent at most once, unless the call says Attempts(n): then
// see Attempts. A reply with micro error headers is
// returned as a *Error (Remote true) whatever its body; a reply with
// neither body nor error headers is a valid empty success.
//
// Errors keep their nats.go and context identities: errors.Is works with
// nats.ErrTimeout and context.DeadlineExceeded (no reply in time),
// nats.ErrNoResponders, nats.ErrConnectionClosed,
// nats.ErrConnectionReconnecting and context.Canceled.
func (c *Client) RequestMsg(ctx context.Context, m *nats.Msg, opts ...CallOption) (*nats.Msg, error) {
	co, deadline, err := c.setUp(ctx, m, func() (callOpts, error) {
		if len(opts) == 0 {
			return callOpts{}, nil
		}
		return callOptions(opts)
	})
	if err != nil {
		return nil, err
	}
	callCtx := ctx
	var cancel context.CancelFunc
	if d, ok := ctx.Deadline(); !ok || deadline.Before(d) {
		callCtx, cancel = context.WithDeadline(ctx, deadline)
	} else if c.st.Hooked() {
		callCtx, cancel = context.WithCancel(ctx) // for the watch
	}
	if cancel != nil {
		defer cancel()
	}
	// A denial of the request's publish or of its reply inbox ends the
	// call at the server's report (connlimit.Watch; nil, and free, on a
	// connection not made by Connect).
	w := c.st.Watch(m.Subject, c.replySub(), cancel)
	defer c.st.Unwatch(w)
	if t := c.tel.Resolve(); t.Active() {
		return c.requestTraced(ctx, callCtx, deadline, m, co, t, w)
	}
	var reply *nats.Msg
	if co.attempts > 1 || c.store != nil {
		reply, err = c.call(ctx, callCtx, deadline, m, co)
	} else {
		reply, err = c.send(ctx, callCtx, deadline, m, co.opID)
	}
	return reply, deniedError(w.Denial(), err)
}

// send is one send of m within callCtx (whose deadline is deadline); ctx
// is the caller's context, to tell a cancellation from the deadline.
func (c *Client) send(ctx, callCtx context.Context, deadline time.Time, m *nats.Msg, opID string) (*nats.Msg, error) {
	if err := connUsable(c.nc); err != nil {
		return nil, err
	}
	var (
		req    nats.Msg
		size   int64
		capped int64
		hdrErr error
		reply  *nats.Msg
	)
	v, _, err := c.st.Send(callCtx, connlimit.Send{
		Decide: func(limit int64) connlimit.Verdict {
			capped = c.capLimit(limit)
			// What is left after the limit check, which may have taken a round trip.
			hdr, hdrSize, err := c.header(m.Header, timeoutMS(time.Until(deadline)), opID)
			if err != nil {
				hdrErr = err
				return connlimit.Refuse
			}
			size = int64(hdrSize + len(m.Data))
			req = nats.Msg{Subject: m.Subject, Data: m.Data, Header: hdr}
			return connlimit.Decide(size, capped, connlimit.NoClaimCheck)
		},
		Write: func() (err error) {
			reply, err = c.muxRequest(callCtx, &req)
			return err
		},
	})
	envelopeAttr(ctx, size)
	switch {
	case hdrErr != nil:
		return nil, hdrErr
	case err != nil:
		return nil, callerr.SendError(ctx, err, true)
	case v != connlimit.Fits:
		return nil, callerr.TooLarge("request", size, capped, nil)
	}
	if rerr := callerr.RemoteError(reply); rerr != nil {
		return nil, rerr
	}
	return c.resolveReply(ctx, callCtx, reply)
}

// capLimit is the connection's limit lowered to the payload cap.
func (c *Client) capLimit(limit int64) int64 {
	if c.payloadCap > 0 && c.payloadCap < limit {
		return c.payloadCap
	}
	return limit
}

// header returns the header map to send and its wire size: the client's
// static headers, then the request's own, then the timeout header. The
// caller's map is not modified.
//
// Requests without headers of their own and with the same timeout (every
// call that takes the client's default) share one read-only map: nats.go
// only reads a message's header while it sends it.
func (c *Client) header(own nats.Header, timeoutMS int64, opID string) (nats.Header, int, error) {
	shared := len(own) == 0 && opID == ""
	var lim int64 // the limit the header announces (-1: none)
	if shared {
		lim = c.announcedLimit()
		if t := c.shared.Load(); t != nil && t.ms == timeoutMS && t.limit == lim {
			return t.h, t.size, nil
		}
	}
	ms := strconv.FormatInt(timeoutMS, 10)
	var h nats.Header
	if opID != "" {
		h = c.requestHeader("", own, HeaderTimeout, ms, HeaderOperationID, opID)
	} else {
		h = c.requestHeader("", own, HeaderTimeout, ms)
	}
	if k, bad := wire.InvalidHeaderKey(h); bad {
		return nil, 0, notSent(CodeInvalidArgument, fmt.Sprintf("invalid header key %q; not sent", k), nats.ErrBadHeaderMsg)
	}
	size := wire.HeaderSize(h)
	if shared {
		c.shared.Store(&sharedHeader{ms: timeoutMS, limit: lim, h: h, size: size})
	}
	return h, size, nil
}

// sharedHeader is a header map shared by requests; never modified once
// stored.
type sharedHeader struct {
	ms    int64
	limit int64 // the connection's limit it announces, -1 for none
	h     nats.Header
	size  int
}

// announcedLimit is the limit a request's header announces now
// (HeaderMaxPayload, or the max-payload of HeaderAcceptClaimCheck), -1
// while none is known.
func (c *Client) announcedLimit() int64 {
	if c.st != nil {
		if limit, ok := c.st.Current(); ok {
			return limit
		}
	}
	return -1
}
