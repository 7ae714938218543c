package shim

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/outcome"
)

// Outcome tells what a caller can know about an operation after an error
// (package outcome's Kind: see its constants, re-exported below).
type Outcome = outcome.Kind

// The outcomes (see package outcome).
const (
	OutcomeOK       = outcome.OK       // no error: the operation completed
	OutcomeNotRun   = outcome.NotRun   // certainly not delivered: sending again cannot repeat a side effect
	OutcomeUnknown  = outcome.Unknown  // may have run: reconcile before doing it again
	OutcomeRejected = outcome.Rejected // the responder said it refused the request
)

// Error is the structured error of every shim operation and of every error
// reply a natssend (or micro) responder sends: package outcome's Error
// (Code, Message, Remote, Size, Limit, Sent, Attempts, and the Outcome
// method), the same type for shim and claimcheck.
type Error = outcome.Error

// InvalidArgument returns a rejection with CodeInvalidArgument (see
// Reject). Return it from a HandlerFunc when the input cannot be used,
// before any work is done.
func InvalidArgument(format string, args ...any) error {
	return Reject(CodeInvalidArgument, fmt.Sprintf(format, args...))
}

// Reject returns an error that natssend handlers send as an error reply
// with the given code and message, marked as a rejection: the responder
// states that the request had no effect, and callers classify the reply as
// OutcomeRejected. Return it only when that is true; any other error a
// handler returns is sent as INTERNAL, which callers must treat as
// OutcomeUnknown.
func Reject(code, message string) *Error { return outcome.Reject(code, message) }

// notSent builds a local refusal (not run).
func notSent(code, msg string, cause error) *Error { return outcome.NotRunError(code, msg, cause) }

// mayHaveRun builds an error after sending (it may have run).
func mayHaveRun(code, msg string, cause error) *Error {
	return outcome.MayHaveRunError(code, msg, cause)
}

// tooLarge builds a local size refusal; the cause keeps nats.ErrMaxPayload.
func tooLarge(what string, size, limit int64, cause error) *Error {
	if cause == nil {
		cause = nats.ErrMaxPayload
	}
	e := notSent(CodePayloadTooLarge, fmt.Sprintf("%s of %d bytes exceeds the %d-byte limit; not sent", what, size, limit), cause)
	e.Size, e.Limit = size, limit
	return e
}

// sendError maps an error from nats.go (its code: outcome.CodeOf, the one
// table). sent says whether the message had been handed to the
// connection when the error arose: when it had not, nothing can have run,
// whatever the error; when it had, only errors that prove non-delivery
// (no responders) are OutcomeNotRun. ctx (nil allowed) is the caller's
// context, to tell a cancellation from the deadline.
func sendError(ctx context.Context, err error, sent bool) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	if sent && connlimit.Unwritten(err) {
		// nats.go returns these only before it writes anything.
		sent = false
	}
	code := outcome.CodeOf(err)
	cancelled := errors.Is(err, context.Canceled) || (ctx != nil && errors.Is(ctx.Err(), context.Canceled))
	if cancelled && (code == CodeInternal || code == CodeDeadlineExceeded) {
		// The caller's cancellation, whatever nats.go made of it.
		code = CodeCanceled
	}
	var msg string
	switch code {
	case CodePermissionDenied:
		var d *connlimit.Denial
		if sent && errors.As(err, &d) && d.Op == "subscribe" {
			// The request went out; its reply cannot come back.
			return mayHaveRun(CodePermissionDenied, "permission denied for the reply subscription after sending; it may have run", err)
		}
		// The server dropped the message: nothing ran.
		return notSent(CodePermissionDenied, "permission denied; not delivered", err)
	case CodeNoResponders:
		e := notSent(CodeNoResponders, "no responders on the subject; not delivered", err)
		e.Sent = true
		return e
	case CodePayloadTooLarge:
		msg = "message exceeds the connection's max_payload"
	case CodeUnavailable:
		msg = "connection lost"
		if errors.Is(err, nats.ErrReconnectBufExceeded) || errors.Is(err, nats.ErrConnectionReconnecting) {
			msg = "connection is reconnecting"
			if !errors.Is(err, nats.ErrConnectionReconnecting) {
				err = fmt.Errorf("%w; %w", nats.ErrConnectionReconnecting, err)
			}
		}
	case CodeInvalidArgument:
		msg = "invalid message"
	case CodeCanceled:
		msg = "cancelled"
		if ctx != nil && !errors.Is(err, context.Canceled) {
			err = fmt.Errorf("%w; %w", ctx.Err(), err)
		}
	case CodeDeadlineExceeded:
		msg = "deadline exceeded"
		if sent {
			msg = "no reply before the deadline"
		}
		err = fmt.Errorf("%w; %w", nats.ErrTimeout, context.DeadlineExceeded)
	default:
		msg = "failed"
	}
	if !sent {
		return notSent(code, msg+"; not sent", err)
	}
	return mayHaveRun(code, msg+" after sending; it may have run", err)
}

// remoteError returns the *Error carried by a reply's micro error headers,
// or nil when the reply is not an error reply.
//
// The outcome is OutcomeRejected only when the responder says the request
// had no effect: natssend handlers mark rejections (Reject,
// InvalidArgument) with HeaderOutcome, and INVALID_ARGUMENT and 4xx codes
// (micro's convention for client errors) count as rejections too. Every
// other code (INTERNAL, PAYLOAD_TOO_LARGE, 5xx, custom codes) is
// OutcomeUnknown: the responder may have done the work.
func remoteError(m *nats.Msg) *Error {
	if len(m.Header) == 0 {
		return nil
	}
	code := m.Header.Get(HeaderErrorCode)
	desc := m.Header.Get(HeaderError)
	if code == "" && desc == "" {
		return nil
	}
	if code == "" {
		code = CodeInternal
	}
	k := OutcomeUnknown
	if (m.Header.Get(HeaderOutcome) == outcomeRejected || code == CodeInvalidArgument || isClientErrorCode(code)) &&
		code != CodePayloadTooLarge && code != CodeInternal {
		k = OutcomeRejected
	}
	e := outcome.New(code, desc, k, nil)
	e.Remote, e.Sent = true, true
	return e
}

// isClientErrorCode reports whether code is an HTTP-style 4xx code.
func isClientErrorCode(code string) bool {
	return len(code) == 3 && code[0] == '4' && code[1] >= '0' && code[1] <= '9' && code[2] >= '0' && code[2] <= '9'
}

// notDelivered is the error of a request the server answered with its
// no-responders status: sent, and certainly not delivered.
func notDelivered() *Error {
	e := notSent(CodeNoResponders, "no responders on the subject; not delivered", nats.ErrNoResponders)
	e.Sent = true
	return e
}

// remoteFailure is a responder's failure it reported without error
// headers (a stream's error frame without them): INTERNAL, it may have
// run.
func remoteFailure(msg string) *Error {
	e := mayHaveRun(CodeInternal, msg, nil)
	e.Remote = true
	return e
}
