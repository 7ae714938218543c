package outcome

import "fmt"

// Kind tells what a caller can know about an operation after an error.
type Kind int

const (
	// OK means no error: the operation completed.
	OK Kind = iota
	// NotRun means the request was certainly not delivered (refused
	// before sending, no responders, connection unusable before sending).
	// Sending it again cannot repeat a side effect.
	NotRun
	// Unknown means the request may have run (timeout, connection lost
	// after sending, cancelled while waiting, a PAYLOAD_TOO_LARGE or
	// INTERNAL reply). The caller must reconcile (look the result up, or
	// use an idempotency key) before doing it again; a blind retry can
	// repeat the side effect.
	Unknown
	// Rejected means the responder answered with an error reply saying it
	// refused the request (for example INVALID_ARGUMENT, which natssend's
	// handlers send before any work is done). That the request had no
	// effect is the responder's statement; its code says why. INTERNAL and
	// PAYLOAD_TOO_LARGE replies are Unknown instead: the responder ran, and
	// failed midway or could not send its result.
	Rejected
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case OK:
		return "ok"
	case NotRun:
		return "not run"
	case Unknown:
		return "unknown"
	case Rejected:
		return "rejected"
	}
	return fmt.Sprintf("Outcome(%d)", int(k))
}

// Codes: the Code of an *Error. A responder may use any code (micro
// services commonly use HTTP-like numbers such as "400"); these are the
// ones natssend produces. README.md's table gives each error of shim and
// claimcheck with its code and outcome.
const (
	// CodePayloadTooLarge: a message did not fit the connection's
	// max_payload. Local refusals were not sent; a reply with this code means
	// the responder ran but could not send its reply.
	CodePayloadTooLarge = "PAYLOAD_TOO_LARGE"
	// CodeInvalidArgument: the input was rejected before any work was done.
	CodeInvalidArgument = "INVALID_ARGUMENT"
	// CodeInternal: the responder failed (returned a plain error or panicked).
	CodeInternal = "INTERNAL"
	// CodeDeadlineExceeded: no reply arrived before the call's deadline.
	CodeDeadlineExceeded = "DEADLINE_EXCEEDED"
	// CodeCanceled: the caller's context was cancelled.
	CodeCanceled = "CANCELED"
	// CodeNoResponders: nobody was subscribed to the subject.
	CodeNoResponders = "NO_RESPONDERS"
	// CodeUnavailable: the connection was closed or reconnecting.
	CodeUnavailable = "UNAVAILABLE"
	// CodeNotFound: what the operation needs does not exist: a claim
	// check's stored payload (expired, deleted, never stored) or the
	// bucket's stream (deleted after the Store was made).
	CodeNotFound = "NOT_FOUND"
	// CodeDataLoss: a claim check's reference or stored payload is not
	// what it claims to be (malformed headers, a size or digest that does
	// not match, a reference bound to another subject).
	CodeDataLoss = "DATA_LOSS"
	// CodePermissionDenied: the server refused a publish or a subscription
	// the connection's user may not make (errors.Is(err,
	// nats.ErrPermissionViolation); the message names the subject). The
	// server reports it only asynchronously: natssend sees it on
	// connections made by shim.Connect and ends the wait at once.
	CodePermissionDenied = "PERMISSION_DENIED"
	// CodeReplyLost: the responder answered with a claim-checked reply, so
	// the operation completed, but the caller could not read the reply
	// (its deadline passed during the download, the payload was gone, the
	// connection failed). Unknown; errors.Is(err, ErrReplyLost).
	CodeReplyLost = "REPLY_LOST"
	// CodeClaimCheckUnresolved: the responder could not resolve a
	// claim-checked request (missing, corrupt, bound to another subject,
	// the deadline passed, or the responder does not serve claim checks)
	// and did not run its handler. A rejection (Rejected).
	CodeClaimCheckUnresolved = "CLAIM_CHECK_UNRESOLVED"
	// CodeStreamBroken is the code of a transfer stream that ended before
	// its end frame (frames lost beyond recovery, the responder gone
	// silent, a digest mismatch, a peer that broke the frame protocol):
	// Unknown, errors.Is(err, io.ErrUnexpectedEOF).
	CodeStreamBroken = "STREAM_BROKEN"
)
