package shim

import "github.com/natssend/natssend/outcome"

// Classify tells what a caller can know after err, an error of package
// shim or package claimcheck: OutcomeOK for nil, OutcomeNotRun when the
// operation certainly did not happen, OutcomeUnknown when it may have
// happened, OutcomeRejected when the responder answered with an error
// reply. The README's table "What each error means for the caller" lists
// every error of both packages with its code and outcome. Errors that did
// not come from natssend are OutcomeUnknown, the only safe assumption. It
// is outcome.Classify.
//
// Callers must reconcile OutcomeUnknown before trying again: a timeout, a
// lost connection or an oversized reply can follow an operation that
// already ran, so a blind retry repeats its side effect.
func Classify(err error) Outcome { return outcome.Classify(err) }

// MayHaveRun reports whether the operation behind err may have taken effect.
// It is false only when it certainly did not (OutcomeNotRun) or when the
// responder answered that it refused the request (OutcomeRejected: an error
// reply other than INTERNAL or PAYLOAD_TOO_LARGE). A nil error means the
// operation ran, so MayHaveRun(nil) is true.
//
// When MayHaveRun is true for an error, do not retry blindly: reconcile
// first (look the result up, or make the operation idempotent).
func MayHaveRun(err error) bool { return outcome.MayHaveRun(err) }

// Describe returns the *Error that stands for err in natssend's one
// vocabulary (outcome.Describe): err's own *Error, or, for an error of
// package claimcheck, a *Error with the code and outcome the README's
// table gives it, wrapping err (errors.Is and errors.As see everything
// err matches). For nil it returns nil; for an error from elsewhere, a
// *Error with OutcomeUnknown and the code its cause gives (INTERNAL when
// none does).
func Describe(err error) *Error { return outcome.Describe(err) }
