package shim

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/connlimit"
)

// Outcome tells what a caller can know about an operation after an error.
type Outcome int

const (
	// OutcomeOK means no error: the operation completed.
	OutcomeOK Outcome = iota
	// OutcomeNotRun means the request was certainly not delivered (refused
	// before sending, no responders, connection unusable before sending).
	// Sending it again cannot repeat a side effect.
	OutcomeNotRun
	// OutcomeUnknown means the request may have run (timeout, connection lost
	// after sending, cancelled while waiting, a PAYLOAD_TOO_LARGE or
	// INTERNAL reply). The caller must reconcile (look the result up, or
	// use an idempotency key) before doing it again; a blind retry can
	// repeat the side effect.
	OutcomeUnknown
	// OutcomeRejected means the responder answered with an error reply saying it
	// refused the request (for example INVALID_ARGUMENT, which natssend's
	// handlers send before any work is done). That the request had no effect
	// is the responder's statement; its code says why. INTERNAL and
	// PAYLOAD_TOO_LARGE replies are OutcomeUnknown instead: the responder
	// ran, and failed midway or could not send its result.
	OutcomeRejected
)

// String returns the outcome's name.
func (o Outcome) String() string {
	switch o {
	case OutcomeOK:
		return "ok"
	case OutcomeNotRun:
		return "not run"
	case OutcomeUnknown:
		return "unknown"
	case OutcomeRejected:
		return "rejected"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Error is the structured error of every shim operation and of every error
// reply a natssend (or micro) responder sends.
//
// errors.Is(err, ErrPayloadTooLarge) holds for Code == CodePayloadTooLarge.
// The nats.go and context identities of the cause are kept: errors.Is with
// nats.ErrTimeout, context.DeadlineExceeded, nats.ErrNoResponders,
// nats.ErrConnectionClosed, nats.ErrMaxPayload and so on works through
// Unwrap.
type Error struct {
	// Code is a machine-readable code, such as CodePayloadTooLarge.
	Code string
	// Message describes the error for people.
	Message string
	// Remote is true when the error came from the responder as an error
	// reply, false when it arose in this process.
	Remote bool
	// Size and Limit are the message size and the limit it exceeded, in
	// bytes, for size refusals; Limit is 0 when it is not known (a reply's
	// limit is the responder connection's, which a message does not show).
	Size, Limit int64
	// Sent reports whether the message left this process. False for
	// refusals; for remote errors, the request was sent.
	Sent bool
	// Attempts holds every attempt's error, in order, when the operation
	// was tried more than once (Attempts, Retry); nil otherwise.
	Attempts []error

	outcome Outcome
	err     error
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e == nil {
		return "natssend: <nil>"
	}
	var b strings.Builder
	b.WriteString("natssend: ")
	if e.Remote {
		b.WriteString("remote ")
	}
	b.WriteString(e.Code)
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.err != nil && !strings.Contains(e.Message, e.err.Error()) {
		b.WriteString(": ")
		b.WriteString(e.err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.err
}

// Is reports whether target is ErrPayloadTooLarge and e is a size error,
// or ErrReplyTooLarge and e is a PAYLOAD_TOO_LARGE error reply.
func (e *Error) Is(target error) bool {
	if e == nil {
		return false
	}
	switch target {
	case ErrPayloadTooLarge:
		return e.Code == CodePayloadTooLarge
	case ErrReplyTooLarge:
		return e.Code == CodePayloadTooLarge && e.Remote
	}
	return false
}

// Outcome reports what is known about the operation that failed.
// An *Error built by hand (a struct literal) reports OutcomeUnknown: a
// non-nil error never means OutcomeOK.
func (e *Error) Outcome() Outcome {
	if e == nil {
		// A nil *Error held in a non-nil error (a typed nil): nothing
		// says it did not run, and a non-nil error is never OutcomeOK.
		return OutcomeUnknown
	}
	if e.outcome == OutcomeOK {
		return OutcomeUnknown
	}
	return e.outcome
}

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
func Reject(code, message string) *Error {
	return &Error{Code: code, Message: message, outcome: OutcomeRejected}
}

// notSent builds a local refusal.
func notSent(code, msg string, cause error) *Error {
	return &Error{Code: code, Message: msg, outcome: OutcomeNotRun, err: cause}
}

// tooLarge builds a local size refusal; the cause keeps nats.ErrMaxPayload.
func tooLarge(what string, size, limit int64, cause error) *Error {
	if cause == nil {
		cause = nats.ErrMaxPayload
	}
	return &Error{
		Code:    CodePayloadTooLarge,
		Message: fmt.Sprintf("%s of %d bytes exceeds the %d-byte limit; not sent", what, size, limit),
		Size:    size, Limit: limit,
		outcome: OutcomeNotRun,
		err:     cause,
	}
}

// sendError maps an error from nats.go. sent says whether the message had
// been handed to the connection when the error arose: when it had not,
// nothing can have run, whatever the error; when it had, only errors that
// prove non-delivery (no responders) are OutcomeNotRun. ctx (nil allowed)
// is the caller's context, to tell a cancellation from the deadline.
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
	cancelled := errors.Is(err, context.Canceled) || (ctx != nil && errors.Is(ctx.Err(), context.Canceled))
	var code, msg string
	switch {
	case errors.Is(err, nats.ErrPermissionViolation):
		var d *connlimit.Denial
		if sent && errors.As(err, &d) && d.Op == "subscribe" {
			// The request went out; its reply cannot come back.
			return &Error{Code: CodePermissionDenied, Message: "permission denied for the reply subscription after sending; it may have run", Sent: true, outcome: OutcomeUnknown, err: err}
		}
		// The server dropped the message: nothing ran.
		return notSent(CodePermissionDenied, "permission denied; not delivered", err)
	case errors.Is(err, nats.ErrNoResponders):
		return &Error{Code: CodeNoResponders, Message: "no responders on the subject; not delivered", Sent: true, outcome: OutcomeNotRun, err: err}
	case errors.Is(err, nats.ErrMaxPayload):
		code, msg = CodePayloadTooLarge, "message exceeds the connection's max_payload"
	case errors.Is(err, nats.ErrReconnectBufExceeded), errors.Is(err, nats.ErrConnectionReconnecting):
		code, msg = CodeUnavailable, "connection is reconnecting"
		if !errors.Is(err, nats.ErrConnectionReconnecting) {
			err = fmt.Errorf("%w; %w", nats.ErrConnectionReconnecting, err)
		}
	case errors.Is(err, nats.ErrBadSubject), errors.Is(err, nats.ErrBadHeaderMsg), errors.Is(err, nats.ErrInvalidMsg),
		errors.Is(err, nats.ErrHeadersNotSupported), errors.Is(err, nats.ErrInvalidContext), errors.Is(err, nats.ErrInvalidConnection),
		errors.Is(err, nats.ErrMsgNoReply), errors.Is(err, nats.ErrMsgNotBound), errors.Is(err, nats.ErrBadQueueName):
		code, msg = CodeInvalidArgument, "invalid message"
	case errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, nats.ErrConnectionDraining), errors.Is(err, nats.ErrDisconnected):
		code, msg = CodeUnavailable, "connection lost"
	case cancelled:
		code, msg = CodeCanceled, "cancelled"
		if ctx != nil && !errors.Is(err, context.Canceled) {
			err = fmt.Errorf("%w; %w", ctx.Err(), err)
		}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		code, msg = CodeDeadlineExceeded, "deadline exceeded"
		if sent {
			msg = "no reply before the deadline"
		}
		err = fmt.Errorf("%w; %w", nats.ErrTimeout, context.DeadlineExceeded)
	default:
		code, msg = CodeInternal, "failed"
	}
	if !sent {
		return notSent(code, msg+"; not sent", err)
	}
	return &Error{Code: code, Message: msg + " after sending; it may have run", Sent: true, outcome: OutcomeUnknown, err: err}
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
	e := &Error{Code: code, Message: desc, Remote: true, Sent: true, outcome: OutcomeUnknown}
	if m.Header.Get(HeaderOutcome) == outcomeRejected || code == CodeInvalidArgument || isClientErrorCode(code) {
		e.outcome = OutcomeRejected
	}
	if code == CodePayloadTooLarge || code == CodeInternal {
		e.outcome = OutcomeUnknown
	}
	return e
}

// isClientErrorCode reports whether code is an HTTP-style 4xx code.
func isClientErrorCode(code string) bool {
	return len(code) == 3 && code[0] == '4' && code[1] >= '0' && code[1] <= '9' && code[2] >= '0' && code[2] <= '9'
}
