package shim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/callerr"
	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/telemetry"
	"github.com/natssend/natssend/outcome"
)

// HandlerFunc handles one request and returns the reply body, or an error
// that becomes an error reply.
type HandlerFunc func(ctx context.Context, req *nats.Msg) ([]byte, error)

// HandlerOption configures Handler.
type HandlerOption func(*handlerOpts) error

type handlerOpts struct {
	base    func() context.Context
	onError func(req *nats.Msg, err error)
	st      *connlimit.State  // the responder's connection, when given
	store   *claimcheck.Store // ServeClaimChecks; nil without
	tel     *telemetry.Config // telemetry options; nil: the globals
}

// BaseContext sets the function that gives each request's parent context
// (context.Background by default), for example a service's lifetime
// context. f must not be nil; a nil context returned by f counts as
// context.Background.
func BaseContext(f func() context.Context) HandlerOption {
	return func(o *handlerOpts) error {
		if f == nil {
			return invalidOption("BaseContext(nil): a nil function")
		}
		o.base = f
		return nil
	}
}

// Conn tells the Handler the connection it is subscribed on. Its replies
// then use that connection's limit state: a reply over the limit is
// refused with the limit stated in the error (Limit), and a reply made in
// the moment after a reconnect, before the new link's limit is known,
// waits for it (within the request's deadline) instead of being retried
// for unboundReplyWait. nc must be the connection of the subscription.
func Conn(nc *nats.Conn) HandlerOption {
	return func(o *handlerOpts) error {
		if nc == nil {
			return invalidOption("Conn(nil): a nil connection")
		}
		o.st = connlimit.For(nc)
		return nil
	}
}

// OnError sets a callback for errors the adapter cannot return to anyone:
// replies that could not be sent (too large, connection closed), panics,
// and fn's errors for requests without a reply subject. Without it those
// errors are discarded, as nats.MsgHandler has no return value.
func OnError(f func(req *nats.Msg, err error)) HandlerOption {
	return func(o *handlerOpts) error { o.onError = f; return nil }
}

// Handler adapts fn to a nats.MsgHandler for Subscribe or QueueSubscribe.
//
//   - fn's context carries the caller's deadline (from HeaderTimeout,
//     measured from when fn starts), so work can stop when the caller has
//     given up.
//   - fn's result is sent with Respond: size-checked, and answered with a
//     PAYLOAD_TOO_LARGE error reply when too large.
//   - An error from fn becomes an error reply. A rejection made by Reject
//     or InvalidArgument keeps its code and message and tells the caller
//     the request had no effect (OutcomeRejected). A *Error that fn built
//     itself (a struct literal) keeps its code and message; the caller
//     classifies it by its code. Any other error, a *Error from a call fn
//     made included, is sent as INTERNAL with its text, which the caller
//     must treat as OutcomeUnknown. Return InvalidArgument when decoding
//     fails, before any domain work. A nil *Error returned as the error
//     (a typed nil) counts as no error.
//   - A panic in fn becomes an INTERNAL error reply ("internal error"; the
//     panic value goes to OnError only).
//   - A request without a reply subject is handled and nothing is sent.
//   - A nil fn, or an invalid option, answers every request with an
//     INTERNAL error reply ("handler misconfigured") and reports the error
//     to OnError; a nil request is reported and ignored.
//   - With Conn, replies use the responder connection's limit state (see
//     Conn); without it, see Respond and ErrNoConn, which the Handler
//     reports once to OnError.
//   - With ServeClaimChecks, a claim-checked request is resolved before fn
//     runs and a reply over the limit goes as a claim check when the
//     caller accepts them (see ServeClaimChecks). Without it, a
//     claim-checked request is answered with a CodeClaimCheckUnresolved
//     rejection and fn does not run.
func Handler(fn HandlerFunc, opts ...HandlerOption) nats.MsgHandler {
	h := handler(fn, opts)
	return func(req *nats.Msg) { h(nil, req) }
}

// handlerSetUp is the one set-up of Handler's and StreamHandler's
// adapters: their options applied (the first error kept, for every
// request to be answered with), the telemetry fixed, and report, which
// hands an error nobody else can be given to OnError.
func handlerSetUp(opts []HandlerOption) (o *handlerOpts, report func(*nats.Msg, error), optErr error) {
	o = &handlerOpts{base: context.Background}
	optErr = applyOptions(o, opts)
	o.tel.Fix()
	report = func(req *nats.Msg, err error) {
		if err != nil && o.onError != nil {
			o.onError(req, err)
		}
	}
	return o, report, optErr
}

// handler is Handler's adapter, which also serves a request that came
// through a micro endpoint (mreq not nil, see Endpoint): its replies then
// go through mreq, so that micro counts them.
func handler(fn HandlerFunc, opts []HandlerOption) func(mreq micro.Request, req *nats.Msg) {
	o, report, optErr := handlerSetUp(opts)
	var noConn sync.Once
	watch := newReplyWatch(o.st, report, o.onError != nil)
	return func(mreq micro.Request, req *nats.Msg) {
		if o.st == nil && req != nil && req.Reply != "" {
			noConn.Do(func() { report(req, ErrNoConn) })
		}
		if req == nil {
			report(req, notSent(CodeInvalidArgument, "nil request", nats.ErrInvalidMsg))
			return
		}
		if optErr != nil || fn == nil {
			err := optErr
			if err == nil {
				err = notSent(CodeInvalidArgument, "nil HandlerFunc", nats.ErrInvalidArg)
			}
			o.refuse(req, err, report)
			return
		}
		ctx, _, end := o.begin(mreq, req)
		var opErr error = errUnresolved
		defer func() { end(opErr) }()
		req, ok := o.resolveRequest(ctx, req, report)
		if !ok {
			return
		}
		r := call(ctx, fn, req)
		opErr = r.err
		if r.panicked != nil {
			report(req, r.panicked)
		}
		if req.Reply == "" {
			report(req, r.err)
			return
		}
		watch.add(req)
		if r.err != nil {
			report(req, replyError(ctx, o.st, req, r.err))
			return
		}
		opErr = o.respondData(ctx, req, r.data)
		report(req, opErr)
	}
}

// refuse reports err, the reason the handler cannot serve (an invalid
// option, a nil function), and answers req with an INTERNAL "handler
// misconfigured" error reply.
func (o *handlerOpts) refuse(req *nats.Msg, err error, report func(*nats.Msg, error)) {
	report(req, err)
	if req.Reply == "" {
		return
	}
	msg := err.Error()
	if e := (*Error)(nil); errors.As(err, &e) && e != nil {
		msg = e.Message
	}
	report(req, respondError(context.Background(), o.st, req, CodeInternal, "handler misconfigured: "+msg, false))
}

// JSONHandler adapts a typed function: the request body is decoded as JSON
// into Req (a decoding failure is answered with INVALID_ARGUMENT before fn
// runs) and fn's result is encoded as JSON. Errors are handled as in
// Handler.
func JSONHandler[Req, Resp any](fn func(ctx context.Context, req Req) (Resp, error), opts ...HandlerOption) nats.MsgHandler {
	return Handler(jsonFunc(fn), opts...)
}

// jsonFunc is JSONHandler's HandlerFunc: nil for a nil fn.
func jsonFunc[Req, Resp any](fn func(ctx context.Context, req Req) (Resp, error)) HandlerFunc {
	if fn == nil {
		return nil
	}
	return func(ctx context.Context, m *nats.Msg) ([]byte, error) {
		var req Req
		if err := json.Unmarshal(m.Data, &req); err != nil {
			return nil, InvalidArgument("decoding request: %v", err)
		}
		resp, err := fn(ctx, req)
		if err = noTypedNil(err); err != nil {
			return nil, err
		}
		return json.Marshal(resp)
	}
}

// begin is what every adapter does when a request arrives: the
// request's context (the caller's deadline, the handler's base), micro's
// request when it came through an endpoint, and the handler's span and
// metrics (op, for attributes of its own); end closes them with the
// operation's error.
func (o *handlerOpts) begin(mreq micro.Request, req *nats.Msg) (ctx context.Context, op *telemetry.Op, end func(error)) {
	ctx, cancel := o.requestContext(req)
	ctx = withMicro(ctx, mreq)
	ctx, started := o.startHandler(ctx, req)
	op = &started
	return ctx, op, func(err error) {
		endOp(ctx, op, err)
		cancel()
	}
}

// requestContext is the context fn runs in: the BaseContext's, with the
// caller's deadline (HeaderTimeout) and operation ID.
func (o *handlerOpts) requestContext(req *nats.Msg) (context.Context, context.CancelFunc) {
	base := o.base()
	if base == nil {
		base = context.Background()
	}
	ctx, cancel := requestContext(base, req)
	return withOperationID(ctx, req), cancel
}

// requestContext derives the handler's context from the request's
// HeaderTimeout, measured from now.
func requestContext(base context.Context, req *nats.Msg) (context.Context, context.CancelFunc) {
	ms, err := strconv.ParseInt(req.Header.Get(HeaderTimeout), 10, 64)
	if err != nil || ms < 0 {
		// No header, or a malformed one (the caller's bug): serve without a
		// deadline rather than drop the request.
		return context.WithCancel(base)
	}
	if ms > int64(math.MaxInt64/time.Millisecond) {
		// Longer than a time.Duration holds (about 292 years): no deadline.
		return context.WithCancel(base)
	}
	return context.WithTimeout(base, time.Duration(ms)*time.Millisecond)
}

// result is what running a HandlerFunc produced.
type result struct {
	data     []byte
	err      error // fn's error, or an INTERNAL error for a panic
	panicked error // the panic, for OnError
}

// call runs fn, turning a panic into an INTERNAL error.
func call(ctx context.Context, fn HandlerFunc, req *nats.Msg) (r result) {
	defer func() {
		if p := recover(); p != nil {
			r.err = outcome.New(CodeInternal, "internal error", OutcomeUnknown, nil)
			r.panicked = fmt.Errorf("natssend: handler panic: %v", p)
		}
	}()
	r.data, r.err = fn(ctx, req)
	r.err = noTypedNil(r.err)
	return r
}

// replyError sends err as an error reply and returns what went wrong.
//
// The handler's own *Error keeps its code: a rejection (Reject,
// InvalidArgument) is marked as such, and one built by hand (a struct
// literal) is sent as it is, for the caller to classify by its code. An
// *Error that came from a call the handler made (a remote error, or a
// failed send of its own) is INTERNAL, like any other error: the handler
// may have done work before it.
func replyError(ctx context.Context, st *connlimit.State, req *nats.Msg, err error) error {
	code, msg, rejected := callerr.ErrorFields(err)
	return respondError(ctx, st, req, code, msg, rejected)
}

// noTypedNil turns a nil *Error held in an error (the common slip of
// returning a function's nil *Error as an error) into nil: no error.
func noTypedNil(err error) error {
	if e, ok := err.(*Error); ok && e == nil {
		return nil
	}
	return err
}
