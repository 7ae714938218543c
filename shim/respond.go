package shim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/natssend/natssend/internal/callerr"
	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/wire"
)

// maxErrorMessage caps the description in an error reply so that the
// error reply itself stays small.
const maxErrorMessage = callerr.MaxErrorMessage

// Respond replies to req with data and the reply's own headers h (nil for
// none). The request's headers (an authorization token, say) are never
// copied into the reply.
//
// The reply is checked against the responder connection's max_payload,
// header block included, and against the caller's when the request says
// it (a natssend Client does: HeaderMaxPayload, or the max-payload of
// HeaderAcceptClaimCheck). A reply over either is not sent; instead a
// PAYLOAD_TOO_LARGE error reply goes to the caller, saying that the
// operation may already have completed, and Respond returns a *Error that
// matches errors.Is(err, ErrPayloadTooLarge) and nats.ErrMaxPayload. The
// caller learns at once instead of waiting for its timeout, and the
// connection stays open.
//
// The check is nats.go's own, against the connection's current limit,
// which Connect keeps exact. A message does not expose its connection, so
// Respond does not know the limit itself (Limit is 0 in the error) and
// cannot tell the moment after a reconnect, when nats.go refuses every
// message until the new link's limit arrives, from a reply that is too
// large: it tries again for up to unboundReplyWait before it answers
// PAYLOAD_TOO_LARGE. A Handler given the connection (the Conn option)
// knows the limit, reports it, and waits for it instead.
func Respond(req *nats.Msg, data []byte, h nats.Header) error {
	return respond(context.Background(), nil, req, data, h)
}

// unboundReplyWait is how long Respond, RespondError and the micro reply
// helpers, which do not know the responder's connection, keep trying a
// reply that nats.go refuses for its size (see Respond).
const unboundReplyWait = 20 * time.Millisecond

// respond is Respond for a responder whose connection's limit state is st
// (nil when unknown).
func respond(ctx context.Context, st *connlimit.State, req *nats.Msg, data []byte, h nats.Header) error {
	if err := checkRequest(ctx, req); err != nil {
		return err
	}
	if k, bad := wire.InvalidHeaderKey(h); bad {
		return notSent(CodeInvalidArgument, fmt.Sprintf("invalid reply header key %q; not sent", k), nats.ErrBadHeaderMsg)
	}
	reply := nats.Msg{Data: data, Header: h}
	if err := overCallerLimit(req.Header, int64(MsgSize(&reply)), func(code, msg string) error {
		return respondError(ctx, st, req, code, msg, false)
	}); err != nil {
		return err
	}
	limit, err := sendReply(ctx, st, int64(MsgSize(&reply)), func() error { return replyWith(ctx, req, &reply) })
	if err == nil {
		return nil
	}
	if errors.Is(err, nats.ErrMaxPayload) {
		return replyTooLarge(int64(MsgSize(&reply)), limit, "responder's", func(code, msg string) error {
			return respondError(ctx, st, req, code, msg, false)
		})
	}
	return callerr.SendError(ctx, err, false)
}

// sendReply sends a reply of size bytes with send. With the responder
// connection's limit state it decides against the connection's limit
// (returning nats.ErrMaxPayload and the limit, nothing sent, when the
// reply does not fit) and decides again when nats.go refuses the reply
// because the link changed. Without it, it tries again for up to
// unboundReplyWait while nats.go refuses the reply for its size.
func sendReply(ctx context.Context, st *connlimit.State, size int64, send func() error) (int64, error) {
	if st == nil {
		err := send()
		if !errors.Is(err, nats.ErrMaxPayload) {
			return 0, err
		}
		for deadline := time.Now().Add(unboundReplyWait); time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
			if err = send(); !errors.Is(err, nats.ErrMaxPayload) {
				return 0, err
			}
		}
		return 0, err
	}
	waited := false
	// A reply (an error reply above all) goes even when the request's
	// context is done: the caller may still be waiting. The wait for the
	// link's limit is bounded by connlimit's round trip timeout.
	sctx := context.WithoutCancel(ctx)
	for {
		v, limit, err := st.Send(sctx, connlimit.Send{
			Decide: func(limit int64) connlimit.Verdict { return connlimit.Decide(size, limit, connlimit.NoClaimCheck) },
			Write:  send,
		})
		if errors.Is(err, nats.ErrConnectionReconnecting) && errors.Is(err, connlimit.ErrNotSent) && !waited {
			// The reply is ready but the link is down: wait for the
			// reconnect (nats.go's reconnect buffer is off, so nothing
			// would hold it), then decide on the new link's limit.
			waited = true
			if waitConnected(ctx, st.Conn(), replyReconnectWait) == nil {
				continue
			}
		}
		if v != connlimit.Fits && err == nil {
			return limit, nats.ErrMaxPayload
		}
		return limit, err
	}
}

// replyReconnectWait bounds how long a Handler given Conn waits for its
// connection to reconnect when a reply is ready while the connection is
// reconnecting (the request's deadline bounds it too). nats.go subscribes
// the caller's reply inbox again after the caller's own reconnect, so a
// reply sent then still reaches a caller that is waiting. When the wait
// ends without a connection the reply is not sent (UNAVAILABLE, reported
// to OnError) and the caller's outcome is unknown.
const replyReconnectWait = 5 * time.Second

// waitConnected waits until nc is connected, at most d and until ctx ends.
func waitConnected(ctx context.Context, nc *nats.Conn, d time.Duration) error {
	deadline := time.Now().Add(d)
	for !nc.IsConnected() {
		switch {
		case nc.IsClosed():
			return nats.ErrConnectionClosed
		case ctx.Err() != nil:
			return ctx.Err()
		case time.Now().After(deadline):
			return nats.ErrConnectionReconnecting
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// overCallerLimit refuses a reply of size bytes above the max-payload the
// request's caller announced (HeaderAcceptClaimCheck or HeaderMaxPayload):
// it would fit the responder's connection and not the caller's (across a
// leafnode one message over the limit closes the whole link), so the
// caller gets PAYLOAD_TOO_LARGE instead. nil when it fits or the caller
// said nothing.
func overCallerLimit(reqHeader nats.Header, size int64, sendErr func(code, msg string) error) error {
	if limit := callerAccept(reqHeader).maxPayload; limit > 0 && size > limit {
		return replyTooLarge(size, limit, "caller's", sendErr)
	}
	return nil
}

// replyTooLarge tells the caller that the reply of size bytes could not be
// sent, using sendErr, and returns the responder's error. limit is the
// limit it exceeds, whose says whose it is ("responder's", "caller's"),
// 0 when unknown.
func replyTooLarge(size, limit int64, whose string, sendErr func(code, msg string) error) error {
	msg := fmt.Sprintf("reply of %d bytes exceeds the %s max_payload and was not sent; the operation may already have completed", size, whose)
	if limit > 0 {
		msg = fmt.Sprintf("reply of %d bytes exceeds the %s max_payload of %d bytes and was not sent; the operation may already have completed", size, whose, limit)
	}
	cause := nats.ErrMaxPayload
	if err := sendErr(CodePayloadTooLarge, msg); err != nil {
		cause = fmt.Errorf("%w; %w", nats.ErrMaxPayload, fmt.Errorf("error reply not sent either: %w", err))
	}
	e := notSent(CodePayloadTooLarge, msg, cause)
	e.Size, e.Limit = size, limit
	return e
}

// RespondError sends an error reply to req: an empty body with micro's
// error headers (Nats-Service-Error-Code: code, Nats-Service-Error:
// message), which natssend clients return as a *Error and micro clients
// understand. code must not be empty; message is cut to 1 KiB.
//
// The caller classifies the reply as OutcomeRejected (the request had no
// effect) for INVALID_ARGUMENT and 4xx codes, and as OutcomeUnknown for
// every other code; a HandlerFunc returns Reject to mark other codes as
// rejections.
func RespondError(req *nats.Msg, code, message string) error {
	return respondError(context.Background(), nil, req, code, message, false)
}

func respondError(ctx context.Context, st *connlimit.State, req *nats.Msg, code, message string, rejected bool) error {
	if err := checkRequest(ctx, req); err != nil {
		return err
	}
	if strings.TrimSpace(code) == "" {
		return notSent(CodeInvalidArgument, "error reply needs a code; not sent", nil)
	}
	reply := nats.Msg{Header: callerr.ErrorHeader(code, message, rejected)}
	send := func() error { return req.RespondMsg(&reply) }
	if mreq := microOf(ctx); mreq != nil {
		send = func() error { return microErrorReply(mreq, code, message, rejected) }
	}
	if _, err := sendReply(ctx, st, int64(MsgSize(&reply)), send); err != nil {
		return callerr.SendError(ctx, err, false)
	}
	return nil
}

// checkRequest refuses a request that cannot be answered: nil, without a
// reply subject, or (unless it came through a micro endpoint, see
// microOf) not bound to a subscription.
func checkRequest(ctx context.Context, req *nats.Msg) error {
	switch {
	case req == nil:
		return notSent(CodeInvalidArgument, "nil request; not sent", nats.ErrInvalidMsg)
	case req.Reply == "":
		return notSent(CodeInvalidArgument, "request has no reply subject; not sent", nats.ErrMsgNoReply)
	case req.Sub == nil && microOf(ctx) == nil:
		return notSent(CodeInvalidArgument, "request is not bound to a subscription; not sent", nats.ErrMsgNotBound)
	}
	return checkReplySubject(req.Reply)
}

// checkReplySubject refuses a reply subject so long that the reply's
// protocol line could exceed the server's max_control_line (a requester
// may send one): the responder's connection would be closed.
func checkReplySubject(reply string) error {
	if wire.ControlLineFits(reply, 0) {
		return nil
	}
	return notSent(CodeInvalidArgument, fmt.Sprintf("the request's reply subject of %d bytes is too long: the reply's protocol line could exceed the server's max_control_line of %d bytes, which would close the connection; not sent",
		len(reply), wire.MaxControlLine), nats.ErrBadSubject)
}

// checkMicroRequest is checkRequest for a micro request.
func checkMicroRequest(req micro.Request) error {
	switch {
	case req == nil:
		return notSent(CodeInvalidArgument, "nil request; not sent", nats.ErrInvalidMsg)
	case req.Reply() == "":
		return notSent(CodeInvalidArgument, "request has no reply subject; not sent", nats.ErrMsgNoReply)
	}
	return checkReplySubject(req.Reply())
}

// RespondMicro replies to a micro service request like Respond: with the
// reply's own headers only, and with the same size check. micro's own
// Request.Respond wraps nats.ErrMaxPayload so that errors.Is no longer sees
// it, and the caller just times out; RespondMicro sends a PAYLOAD_TOO_LARGE
// error reply instead and returns a *Error matching ErrPayloadTooLarge.
func RespondMicro(req micro.Request, data []byte, h nats.Header) error {
	if err := checkMicroRequest(req); err != nil {
		return err
	}
	if k, bad := wire.InvalidHeaderKey(h); bad {
		return notSent(CodeInvalidArgument, fmt.Sprintf("invalid reply header key %q; not sent", k), nats.ErrBadHeaderMsg)
	}
	if err := overCallerLimit(nats.Header(req.Headers()), int64(wire.MsgSize(h, len(data))), func(code, msg string) error {
		return RespondMicroError(req, code, msg)
	}); err != nil {
		return err
	}
	_, err := sendReply(context.Background(), nil, int64(wire.MsgSize(h, len(data))), func() error {
		return microReply(req, data, h)
	})
	if err == nil {
		return nil
	}
	if errors.Is(err, nats.ErrMaxPayload) {
		return replyTooLarge(int64(wire.MsgSize(h, len(data))), 0, "responder's", func(code, msg string) error {
			return RespondMicroError(req, code, msg)
		})
	}
	return callerr.SendError(context.Background(), err, false)
}

// microMaxPayload restores nats.ErrMaxPayload in an error of micro's
// Respond, which formats its cause with %s so that only the text is left.
func microMaxPayload(err error) error {
	if err != nil && errors.Is(err, micro.ErrRespond) && strings.Contains(err.Error(), nats.ErrMaxPayload.Error()) {
		return fmt.Errorf("%w; %w", nats.ErrMaxPayload, err)
	}
	return err
}

// RespondMicroError sends a micro error reply (code and description
// headers, empty body), with the description cut to 1 KiB.
func RespondMicroError(req micro.Request, code, message string) error {
	if err := checkMicroRequest(req); err != nil {
		return err
	}
	if strings.TrimSpace(code) == "" {
		return notSent(CodeInvalidArgument, "error reply needs a code; not sent", micro.ErrArgRequired)
	}
	if message == "" {
		message = code
	}
	if _, err := sendReply(context.Background(), nil, 1, func() error {
		return microErrorReply(req, code, message, false)
	}); err != nil {
		return callerr.SendError(context.Background(), err, false)
	}
	return nil
}
