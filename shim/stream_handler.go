package shim

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/outcome"
)

// StreamHandlerFunc handles one stream request: it writes the reply body to
// w, as a net/http handler writes its response. An error returned before
// the first Write or Flush becomes an ordinary error reply (none once the
// caller's deadline has passed: it no longer waits, and its own deadline
// error is what it sees); one returned after reaches the caller as an
// error frame, after the bytes written before it.
type StreamHandlerFunc func(ctx context.Context, req *nats.Msg, w *StreamWriter) error

// StreamHandler adapts fn to a nats.MsgHandler that answers
// Client.RequestStream calls with a transfer stream.
//
//   - It needs the Conn option (the connection it is subscribed on): the
//     stream's frames are sized to that connection's current limit (or
//     to the caller's, when its request says a lower one: HeaderMaxPayload
//     or HeaderAcceptClaimCheck's max-payload) and the caller's credit
//     and acknowledgements arrive on an inbox of it.
//     Without Conn, or with a nil fn or an invalid option, every request
//     is answered with an INTERNAL error reply ("handler misconfigured").
//   - fn's context carries the caller's deadline (HeaderTimeout) and its
//     operation ID, and ends (context.Cause: ErrStreamCanceled or
//     ErrCallerGone) when the caller closes the stream, its context ends,
//     it goes silent for the stream's idle bound, or its wait for the
//     first frame (the call's Timeout) ends before fn's first Write or
//     Flush; Write fails from then on, within about a second of a Close.
//   - Errors are mapped as Handler maps them: Reject and InvalidArgument
//     keep their meaning, a *Error literal its code, anything else is
//     INTERNAL; a panic is INTERNAL ("internal error"; the value goes to
//     OnError). A stream that has started carries the error in its error
//     frame.
//   - With ServeClaimChecks a claim-checked request is resolved before fn
//     runs (as in Handler). Replies are never claim-checked: a stream has
//     no size limit.
//   - A request that is not a stream request (no HeaderStream, say a plain
//     Client.Request) is rejected with INVALID_ARGUMENT; fn does not run.
//
// fn runs in the subscription's callback, as Handler's does, and after it
// returns the adapter waits for the caller to acknowledge the end (at most
// twice the idle bound, however many keepalives come), so one subscription serves one stream at a time:
// subscribe several members of a queue group for concurrent streams.
func StreamHandler(fn StreamHandlerFunc, opts ...HandlerOption) nats.MsgHandler {
	h := streamHandler(fn, opts)
	return func(req *nats.Msg) { h(nil, req) }
}

// streamHandler is StreamHandler's adapter, which also serves a request
// that came through a micro endpoint (see Endpoint): an error reply before
// the stream starts then goes through mreq, so that micro counts it.
func streamHandler(fn StreamHandlerFunc, opts []HandlerOption) func(mreq micro.Request, req *nats.Msg) {
	o, report, optErr := handlerSetUp(opts)
	return func(mreq micro.Request, req *nats.Msg) {
		if req == nil {
			report(req, notSent(CodeInvalidArgument, "nil request", nats.ErrInvalidMsg))
			return
		}
		if msg := misconfigured(optErr, o, fn); msg != "" {
			o.refuse(req, notSent(CodeInvalidArgument, msg, ErrInvalidOption), report)
			return
		}
		if req.Reply == "" {
			report(req, notSent(CodeInvalidArgument, "stream request without a reply subject", nats.ErrMsgNoReply))
			return
		}
		ctx, op, end := o.begin(mreq, req)
		var opErr error = errUnresolved
		defer func() { end(opErr) }()
		sr, ok := parseMarker(req.Header.Get(HeaderStream))
		if !ok {
			report(req, respondError(ctx, o.st, req, CodeInvalidArgument,
				fmt.Sprintf("not a stream request (no %s header of version %d, or a window above MaxStreamWindow or an idle bound above MaxStreamIdle): use Client.RequestStream", HeaderStream, streamVersion), true))
			return
		}
		if peer := callerAccept(req.Header).maxPayload; peer > 0 && peer < minStreamPayload {
			report(req, respondError(ctx, o.st, req, CodeInvalidArgument,
				fmt.Sprintf("a stream caller must accept messages of at least %d bytes (it declared a max-payload of %d); the handler did not run", minStreamPayload, peer), true))
			return
		}
		if crossesAccount(req.Reply) {
			report(req, respondError(ctx, o.st, req, CodeInvalidArgument,
				"a stream cannot cross an account import: the caller's flow control cannot reach this account; the handler did not run", true))
			return
		}
		req, ok = o.resolveRequest(ctx, req, report)
		if !ok {
			return
		}
		// A frame the server drops (allow_responses spent or missing) or
		// a control inbox it refuses (no subscribe on the inbox prefix)
		// ends the stream at the server's report, as PERMISSION_DENIED.
		sctx, stop := o.st.WatchDenied(ctx, []string{req.Reply}, nil)
		defer stop()
		s := newStreamOut(sctx, o.st, req.Reply, sr, callerAccept(req.Header).maxPayload)
		err, panicked := callStream(s.Context(), fn, req, &StreamWriter{s: s})
		report(req, panicked)
		ferr := finishStream(s, o.st, req, err)
		if d := connlimit.DeniedCause(sctx); d != nil {
			ferr = mayHaveRun(CodePermissionDenied, d.Error()+": the stream ended there; the caller got part of it at most", d)
		}
		streamAttrs(op, s)
		opErr = err
		if opErr == nil {
			opErr = ferr
		}
		report(req, ferr)
	}
}

// misconfigured returns what makes a StreamHandler unable to serve, or "".
func misconfigured(optErr error, o *handlerOpts, fn StreamHandlerFunc) string {
	var e *Error
	switch {
	case errors.As(optErr, &e):
		return e.Message
	case optErr != nil:
		return optErr.Error()
	case fn == nil:
		return "nil StreamHandlerFunc"
	case o.st == nil:
		return "StreamHandler needs the Conn option (the connection it is subscribed on)"
	}
	return ""
}

// callStream runs fn, turning a panic into an INTERNAL error.
func callStream(ctx context.Context, fn StreamHandlerFunc, req *nats.Msg, w *StreamWriter) (err, panicked error) {
	defer func() {
		if p := recover(); p != nil {
			err = outcome.New(CodeInternal, "internal error", OutcomeUnknown, nil)
			panicked = fmt.Errorf("natssend: stream handler panic: %v", p)
		}
	}()
	return noTypedNil(fn(ctx, req, w)), nil
}
