package shim

import (
	"fmt"

	"github.com/nats-io/nats.go"

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

// notDelivered is the error of a request the server answered with its
// no-responders status: sent, and certainly not delivered.
func notDelivered() *Error {
	e := notSent(CodeNoResponders, "no responders on the subject; not delivered", nats.ErrNoResponders)
	e.Sent = true
	return e
}
