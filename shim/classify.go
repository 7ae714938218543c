package shim

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
)

// Classify tells what a caller can know after err, an error of package
// shim or package claimcheck: OutcomeOK for nil, OutcomeNotRun when the
// operation certainly did not happen, OutcomeUnknown when it may have
// happened, OutcomeRejected when the responder answered with an error
// reply. The README's table "What each error means for the caller" lists
// every error of both packages with its code and outcome. Errors that did
// not come from natssend are OutcomeUnknown, the only safe assumption.
//
// Callers must reconcile OutcomeUnknown before trying again: a timeout, a
// lost connection or an oversized reply can follow an operation that
// already ran, so a blind retry repeats its side effect.
func Classify(err error) Outcome {
	if err == nil {
		return OutcomeOK
	}
	return Describe(err).Outcome()
}

// MayHaveRun reports whether the operation behind err may have taken effect.
// It is false only when it certainly did not (OutcomeNotRun) or when the
// responder answered that it refused the request (OutcomeRejected: an error
// reply other than INTERNAL or PAYLOAD_TOO_LARGE). A nil error means the
// operation ran, so MayHaveRun(nil) is true.
//
// When MayHaveRun is true for an error, do not retry blindly: reconcile
// first (look the result up, or make the operation idempotent).
func MayHaveRun(err error) bool {
	switch Classify(err) {
	case OutcomeNotRun, OutcomeRejected:
		return false
	}
	return true
}

// Describe returns the *Error that stands for err in natssend's one
// vocabulary: err's own *Error (package shim's), or, for an error of
// package claimcheck, a *Error with the code and outcome the README's
// table gives it, wrapping err (errors.Is and errors.As see everything
// err matches). For nil it returns nil; for an error from elsewhere, a
// *Error with OutcomeUnknown and the code its cause gives (INTERNAL when
// none does).
func Describe(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		if e == nil {
			// A typed nil: nothing says it did not run (see Outcome).
			return &Error{Code: CodeInternal, outcome: OutcomeUnknown, err: err}
		}
		return e
	}
	if d := describeClaimCheck(err); d != nil {
		return d
	}
	// Anything else may have run: its code is what its cause says (a
	// claimcheck JetStream publish whose acknowledgement timed out is
	// DEADLINE_EXCEEDED), its outcome unknown.
	return &Error{Code: causeCode(err), outcome: OutcomeUnknown, err: err}
}

// describeClaimCheck is Describe for package claimcheck's errors, nil for
// an error that is not one.
func describeClaimCheck(err error) *Error {
	notRun := func(code string) *Error { return &Error{Code: code, outcome: OutcomeNotRun, err: err} }
	var re *claimcheck.ResolveError
	var nr interface{ NotRun() bool }
	switch {
	case errors.Is(err, claimcheck.ErrInvalidOption), errors.Is(err, claimcheck.ErrNoErrorHandler),
		errors.Is(err, claimcheck.ErrReservedHeader):
		return notRun(CodeInvalidArgument)
	case errors.As(err, &re):
		// A read changes nothing: the payload stays stored (DeleteAfterRead
		// deletes only after a complete, verified read).
		return notRun(readCode(re))
	case errors.Is(err, claimcheck.ErrTooLarge):
		// Before anything was stored or published (also from Resolve: the
		// declared size is above the receiver's maximum).
		return notRun(CodePayloadTooLarge)
	case errors.Is(err, claimcheck.ErrClosed):
		return notRun(CodeUnavailable)
	case errors.Is(err, claimcheck.ErrNotPublished), errors.As(err, &nr) && nr.NotRun():
		// Nothing was published (or, from New, no Store was made).
		return notRun(causeCode(err))
	}
	return nil
}

// readCode is the code of a claim check that could not be resolved.
func readCode(re *claimcheck.ResolveError) string {
	switch {
	case errors.Is(re, claimcheck.ErrMissing):
		return CodeNotFound
	case errors.Is(re, claimcheck.ErrCorrupt):
		return CodeDataLoss
	case errors.Is(re, claimcheck.ErrTooLarge):
		return CodePayloadTooLarge
	case errors.Is(re, nats.ErrInvalidMsg):
		return CodeInvalidArgument
	}
	return causeCode(re)
}

// causeCode is the code of what made a claim check fail before anything
// was published, or a read fail: its cause as nats.go or the context
// reported it.
func causeCode(err error) string {
	switch {
	case errors.Is(err, nats.ErrPermissionViolation):
		return CodePermissionDenied
	case errors.Is(err, jetstream.ErrBucketNotFound), errors.Is(err, jetstream.ErrStreamNotFound):
		return CodeNotFound
	case errors.Is(err, jetstream.ErrJetStreamNotEnabled), errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount):
		return CodeUnavailable
	case errors.Is(err, nats.ErrNoResponders), errors.Is(err, jetstream.ErrNoStreamResponse):
		return CodeNoResponders
	case errors.Is(err, nats.ErrMaxPayload):
		return CodePayloadTooLarge
	case errors.Is(err, context.Canceled):
		return CodeCanceled
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return CodeDeadlineExceeded
	case errors.Is(err, nats.ErrBadSubject), errors.Is(err, nats.ErrBadHeaderMsg), errors.Is(err, nats.ErrInvalidMsg),
		errors.Is(err, nats.ErrInvalidArg), errors.Is(err, nats.ErrInvalidConnection), errors.Is(err, nats.ErrInvalidContext),
		errors.Is(err, nats.ErrBadQueueName):
		return CodeInvalidArgument
	case errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, nats.ErrConnectionDraining), errors.Is(err, nats.ErrDisconnected),
		errors.Is(err, nats.ErrConnectionReconnecting), errors.Is(err, nats.ErrReconnectBufExceeded):
		return CodeUnavailable
	}
	return CodeInternal
}
