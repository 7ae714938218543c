package shim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
)

// HandlerFunc handles one request and returns the reply body, or an error
// that becomes an error reply.
type HandlerFunc func(ctx context.Context, req *nats.Msg) ([]byte, error)

// HandlerOption configures Handler.
type HandlerOption func(*handlerOpts)

type handlerOpts struct {
	base    func() context.Context
	onError func(req *nats.Msg, err error)
}

// BaseContext sets the function that gives each request's parent context
// (context.Background by default), for example a service's lifetime
// context.
func BaseContext(f func() context.Context) HandlerOption {
	return func(o *handlerOpts) { o.base = f }
}

// OnError sets a callback for errors the adapter cannot return to anyone:
// replies that could not be sent (too large, connection closed), panics,
// and requests dropped because the caller's deadline had passed. Without
// it those errors are discarded, as nats.MsgHandler has no return value.
func OnError(f func(req *nats.Msg, err error)) HandlerOption {
	return func(o *handlerOpts) { o.onError = f }
}

// ErrCallerGone is reported to OnError when a request arrives after the
// caller's deadline: the handler is not run, since nobody waits for it.
var ErrCallerGone = errors.New("natssend: request arrived after the caller's deadline; not handled")

// Handler adapts fn to a nats.MsgHandler for Subscribe or QueueSubscribe.
//
//   - fn's context carries the caller's deadline (from HeaderTimeout), so
//     work can stop when the caller has given up. A request that arrives
//     after its deadline is not handled at all.
//   - fn's result is sent with Respond: size-checked, and answered with a
//     PAYLOAD_TOO_LARGE error reply when too large.
//   - An error from fn becomes an error reply: a *Error (see NewError,
//     InvalidArgument) keeps its code and message; any other error is sent
//     as INTERNAL with its text. Return InvalidArgument when decoding fails,
//     before any domain work, so the caller knows nothing ran.
//   - A panic in fn becomes an INTERNAL error reply ("internal error"; the
//     panic value goes to OnError only).
//   - A request without a reply subject is handled and nothing is sent.
func Handler(fn HandlerFunc, opts ...HandlerOption) nats.MsgHandler {
	o := handlerOpts{base: context.Background}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	report := func(req *nats.Msg, err error) {
		if err != nil && o.onError != nil {
			o.onError(req, err)
		}
	}
	return func(req *nats.Msg) {
		ctx, cancel, err := requestContext(o.base(), req)
		if err != nil {
			report(req, err)
			return
		}
		defer cancel()
		data, ferr, panicked := call(ctx, fn, req)
		if panicked != nil {
			report(req, panicked)
		}
		if req.Reply == "" {
			report(req, ferr)
			return
		}
		if ferr != nil {
			report(req, replyError(req, ferr))
			return
		}
		report(req, Respond(req, data, nil))
	}
}

// JSONHandler adapts a typed function: the request body is decoded as JSON
// into Req (a decoding failure is answered with INVALID_ARGUMENT before fn
// runs) and fn's result is encoded as JSON. Errors are handled as in
// Handler.
func JSONHandler[Req, Resp any](fn func(ctx context.Context, req Req) (Resp, error), opts ...HandlerOption) nats.MsgHandler {
	return Handler(func(ctx context.Context, m *nats.Msg) ([]byte, error) {
		var req Req
		if err := json.Unmarshal(m.Data, &req); err != nil {
			return nil, InvalidArgument("decoding request: %v", err)
		}
		resp, err := fn(ctx, req)
		if err != nil {
			return nil, err
		}
		return json.Marshal(resp)
	}, opts...)
}

// requestContext derives the handler's context from the request's
// HeaderTimeout, measured from now (the arrival).
func requestContext(base context.Context, req *nats.Msg) (context.Context, context.CancelFunc, error) {
	v := req.Header.Get(HeaderTimeout)
	if v == "" {
		ctx, cancel := context.WithCancel(base)
		return ctx, cancel, nil
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms < 0 {
		// A malformed header is the caller's bug; serve without a deadline
		// rather than drop the request.
		ctx, cancel := context.WithCancel(base)
		return ctx, cancel, nil
	}
	if ms == 0 {
		return nil, nil, ErrCallerGone
	}
	ctx, cancel := context.WithTimeout(base, time.Duration(ms)*time.Millisecond)
	return ctx, cancel, nil
}

// call runs fn, turning a panic into an INTERNAL error.
func call(ctx context.Context, fn HandlerFunc, req *nats.Msg) (data []byte, err error, panicked error) {
	defer func() {
		if r := recover(); r != nil {
			err = NewError(CodeInternal, "internal error")
			panicked = fmt.Errorf("natssend: handler panic: %v", r)
		}
	}()
	data, err = fn(ctx, req)
	return data, err, nil
}

// replyError sends err as an error reply and returns what went wrong.
func replyError(req *nats.Msg, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return RespondError(req, e.Code, e.Message)
	}
	return RespondError(req, CodeInternal, err.Error())
}
