package outcome

import (
	"errors"
	"strings"
)

// Error is the structured error of every natssend operation and of every
// error reply a natssend (or micro) responder sends: a Code, a Kind (see
// Outcome) and the cause, which errors.Is and errors.As see through
// Unwrap (nats.ErrTimeout, context.DeadlineExceeded,
// nats.ErrNoResponders, claimcheck.ErrMissing and so on).
//
// errors.Is(err, ErrPayloadTooLarge) holds for Code == CodePayloadTooLarge,
// errors.Is(err, ErrReplyTooLarge) for such an error reply.
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
	// was tried more than once (shim's Attempts and Retry); nil otherwise.
	Attempts []error

	kind Kind
	err  error
}

// New returns an *Error with code, message, kind and cause (nil for
// none). Prefer NotRunError and MayHaveRunError, which say which of the
// two a caller gets.
func New(code, message string, k Kind, cause error) *Error {
	return &Error{Code: code, Message: message, kind: k, err: cause}
}

// NotRunError returns an error after which the operation certainly did
// not run (Kind NotRun): refused before anything was sent or stored, or
// proven undelivered.
func NotRunError(code, message string, cause error) *Error {
	return &Error{Code: code, Message: message, kind: NotRun, err: cause}
}

// MayHaveRunError returns an error after which the operation may have run
// (Kind Unknown): the message was sent (Sent is true) and what followed is
// not known.
func MayHaveRunError(code, message string, cause error) *Error {
	return &Error{Code: code, Message: message, Sent: true, kind: Unknown, err: cause}
}

// Reject returns an error that natssend handlers send as an error reply
// with the given code and message, marked as a rejection (Kind Rejected):
// the responder states that the request had no effect. Return it only
// when that is true; any other error a handler returns is sent as
// INTERNAL, which callers must treat as Unknown.
func Reject(code, message string) *Error {
	return &Error{Code: code, Message: message, kind: Rejected}
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

// Outcome reports what is known about the operation that failed. An
// *Error built by hand (a struct literal) reports Unknown: a non-nil error
// never means OK.
func (e *Error) Outcome() Kind {
	if e == nil || e.kind == OK {
		// A nil *Error held in a non-nil error (a typed nil), or one built
		// by hand: nothing says it did not run.
		return Unknown
	}
	return e.kind
}

// Errors to match with errors.Is.
var (
	// ErrPayloadTooLarge is the errors.Is target for every refusal because
	// of size: a request, reply or publish that did not fit, and a
	// PAYLOAD_TOO_LARGE error reply from a responder. The two differ in
	// what they mean for the caller: a local refusal was not sent
	// (NotRun), while a PAYLOAD_TOO_LARGE reply (also errors.Is
	// ErrReplyTooLarge) comes from a responder that may already have done
	// the work (Unknown). Check Classify before sending a smaller request
	// again.
	ErrPayloadTooLarge = errors.New("natssend: payload too large")
	// ErrReplyTooLarge matches a PAYLOAD_TOO_LARGE error reply: the
	// responder ran, but its reply did not fit its connection's
	// max_payload.
	ErrReplyTooLarge = errors.New("natssend: reply too large")
	// ErrReplyLost matches (errors.Is) a call whose operation completed but
	// whose claim-checked reply could not be read: see CodeReplyLost. The
	// cause (context.DeadlineExceeded, claimcheck.ErrMissing, ...) stays
	// visible to errors.Is as well.
	ErrReplyLost = errors.New("natssend: the operation completed but its reply was lost")
	// ErrInvalidOption is wrapped by every error about an invalid option
	// value in natssend (shim.ErrInvalidOption, claimcheck.ErrInvalidOption
	// and telemetry.ErrInvalidOption are this value): INVALID_ARGUMENT,
	// NotRun.
	ErrInvalidOption error = &coded{msg: "natssend: invalid option", code: CodeInvalidArgument, kind: NotRun}
)

// coded is a sentinel of this package that knows its code and kind.
type coded struct {
	msg  string
	code string
	kind Kind
}

func (e *coded) Error() string { return e.msg }

// OutcomeCode implements Coder.
func (e *coded) OutcomeCode() (string, Kind) { return e.code, e.kind }

// WithCause returns a copy of e whose cause (what Unwrap returns) is
// cause; e is not modified.
func (e *Error) WithCause(cause error) *Error {
	if e == nil {
		return nil
	}
	c := *e
	c.err = cause
	return &c
}

// Built reports whether e was made by this package (New, NotRunError,
// MayHaveRunError, Reject, Describe) rather than as a struct literal,
// whose kind nobody stated (its Outcome is Unknown).
func Built(e *Error) bool { return e != nil && e.kind != OK }
