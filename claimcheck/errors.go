package claimcheck

import (
	"errors"
	"fmt"
	"strings"

	"github.com/natssend/natssend/internal/telemetry"
	"github.com/natssend/natssend/outcome"
)

var (
	// ErrNotPublished is matched (errors.Is) by every error of Prepare,
	// PublishMsg and PublishJetStream for which the Store knows that
	// nothing was published: invalid input (a nil message, an empty
	// subject, ErrReservedHeader), ErrTooLarge, ErrClosed, a failed upload
	// (whatever was written is purged), a failed lookup of the
	// connection's limit, a publish the server or nats.go refused, and a
	// reference that was not published (its payload is deleted). It is
	// not matched when the outcome is unknown, for example a JetStream
	// publish whose acknowledgement timed out: the message may have been
	// stored. Errors matching ErrNotPublished keep their cause: errors.Is
	// and errors.As still see ErrTooLarge, *jetstream.APIError and the
	// rest. Prepare itself never publishes, so all its errors match.
	ErrNotPublished error = &kindError{msg: "claimcheck: nothing was published"}
	// ErrTooLarge is returned, before anything is stored or published, for
	// a body above the Store's maximum object size (MaxSize unless
	// WithMaxObjectSize set less), for a message whose claim-check
	// reference (its headers plus HeaderRef and HeaderSize) would not fit
	// max_payload or the stream's max_msg_size whatever the body, and for
	// a subject so long that the object's meta data, which records it,
	// does not fit max_payload. The error's text says which limit was
	// exceeded; from the publish methods it also matches ErrNotPublished.
	// Resolve and Open return it for a claim check whose declared size is
	// above the receiving Store's maximum, and for an object whose chunks
	// are larger than a Store on the reading connection writes its own
	// (stored behind a higher max_payload: across a leafnode each would
	// close the link).
	ErrTooLarge error = &kindError{msg: "claimcheck: payload too large", code: outcome.CodePayloadTooLarge}
	// ErrMissing is returned by Resolve and Open when the referenced
	// object does not exist: it expired (TTL), was deleted, or never
	// existed. The error names the object.
	ErrMissing error = &kindError{msg: "claimcheck: stored payload missing", code: outcome.CodeNotFound}
	// ErrCorrupt is returned by Resolve and Open for malformed claim-check
	// headers, a declared size that differs from the stored size, a digest
	// mismatch, or a reference bound to another subject
	// (ErrSubjectMismatch, which matches ErrCorrupt too).
	ErrCorrupt error = &kindError{msg: "claimcheck: corrupt claim check", code: outcome.CodeDataLoss}
	// ErrSubjectMismatch is returned by Resolve and Open when the object
	// was stored for a message on another subject than the one the
	// message was received on, and subject binding is on (see
	// WithSubjectBinding). errors.Is(err, ErrCorrupt) is also true for it.
	// It is also what a stream subject transform, a transforming source or
	// mirror, or an account subject mapping produces for a genuine claim
	// check, so Consume and Messages do not Term such a message (see
	// Consume).
	ErrSubjectMismatch error = &kindError{msg: "claimcheck: claim check bound to another subject", parent: ErrCorrupt, code: outcome.CodeDataLoss}
	// ErrForeignDomain is returned by Resolve, Open and the subscription
	// helpers (wrapped in a *ResolveError whose Detail names the domain)
	// for a claim check stored in a JetStream domain that is neither the
	// Store's own nor one named with WithDomains. Nothing is read.
	ErrForeignDomain error = &kindError{msg: "claimcheck: claim check stored in a JetStream domain this Store may not read"}
	// ErrNoErrorHandler is returned by the subscription helpers when no
	// error callback is given: resolve failures must go somewhere.
	ErrNoErrorHandler error = &kindError{msg: "claimcheck: an error handler is required", code: outcome.CodeInvalidArgument}
	// ErrReservedHeader is returned by Prepare and the publish methods for
	// a message with a body that already carries HeaderRef or HeaderSize:
	// receivers would take it for a claim check and ignore its body.
	// Nothing is published; errors.Is(err, ErrNotPublished) is true for it.
	ErrReservedHeader error = &kindError{msg: "claimcheck: message already carries a claim-check header", parent: ErrNotPublished, code: outcome.CodeInvalidArgument}
	// errReplyStored is returned by a reply claim check (package shim's,
	// through internal/claimops) when a reply to the same
	// reply subject is already stored (under replyObjectName), or is
	// stored by another responder while this one uploads: each reply
	// subject gets one stored reply, the first, and the caller reads that
	// one. Nothing of this reply is left stored; it also matches
	// ErrReservedHeader and ErrNotPublished (test for errReplyStored
	// first). A responder that gets it has nothing to send: another
	// responder has answered the request, or is answering it (should that
	// one then fail to send its reference, the caller gets no reply).
	errReplyStored error = &kindError{msg: "claimcheck: a reply to this reply subject is already stored", parent: ErrReservedHeader, code: outcome.CodeInvalidArgument}
	// ErrClosed is returned by Prepare and the publish methods of a Store
	// after Close. Nothing is published; errors.Is(err, ErrNotPublished)
	// is true for it.
	ErrClosed error = &kindError{msg: "claimcheck: store closed", parent: ErrNotPublished, code: outcome.CodeUnavailable}
	// errUnreachable: the object's chunks are larger than the reading
	// connection can receive (objReader.reachable); it matches ErrTooLarge.
	// Permanent for this reader, not for the message: another reader, or
	// this one once the site's limit is raised, can read it, so Consume
	// Naks it.
	errUnreachable error = &kindError{msg: "claimcheck: payload too large: its chunks cannot reach this connection", parent: ErrTooLarge, code: outcome.CodePayloadTooLarge}
	// errReadExited: a shared read's goroutine ended by runtime.Goexit (in
	// a WithSubjectMatch function) before it set a result: every caller
	// waiting for it fails with it. Not permanent.
	errReadExited error = &kindError{msg: "claimcheck: the read ended without a result"}
	// ErrInvalidOption is wrapped by every error about an invalid option
	// value, in this package and in package shim (shim.ErrInvalidOption is
	// the same value): an out-of-range TTL, replica count, size or
	// timeout, an empty bucket name, a nil function, a negative reserve.
	// Options are checked before anything is created or sent. A nil
	// option (Option, SubscribeOpt, ConsumeOpt, MessagesOpt) is ignored.
	// The telemetry package's options wrap it too.
	ErrInvalidOption = telemetry.ErrInvalidOption
)

// notPublishedError marks an error after which the Store knows nothing
// was published: it matches ErrNotPublished and unwraps to its cause.
type notPublishedError struct{ err error }

// Error says so when the cause's own text does not (a transport error
// such as "nats: connection reconnecting").
func (e *notPublishedError) Error() string {
	if msg := e.err.Error(); strings.HasPrefix(msg, "claimcheck:") {
		return msg
	}
	return "claimcheck: nothing was published: " + e.err.Error()
}

func (e *notPublishedError) Unwrap() error { return e.err }

// OutcomeCode implements outcome.Coder: nothing was published, for the
// reason its cause gives.
func (e *notPublishedError) OutcomeCode() (string, outcome.Kind) { return "", outcome.NotRun }

func (e *notPublishedError) Is(target error) bool { return target == ErrNotPublished }

// OutcomeCode implements outcome.Coder: nothing was stored or published,
// for the reason its cause gives.
func (e *storeError) OutcomeCode() (string, outcome.Kind) { return "", outcome.NotRun }

// notPublished marks err as "nothing was published" (nil stays nil).
func notPublished(err error) error {
	if err == nil || errors.Is(err, ErrNotPublished) {
		return err
	}
	return &notPublishedError{err}
}

// kindError is a sentinel error that also matches a parent sentinel.
//
// Every kindError is one of this package's errors and says its code in
// natssend's one vocabulary (package outcome): each means nothing was
// stored, published or read (NotRun); an empty code is the code of its
// cause (outcome.CodeOf).
type kindError struct {
	msg    string
	parent error
	code   string
}

func (e *kindError) Error() string        { return e.msg }
func (e *kindError) Is(target error) bool { return target == e.parent }

// OutcomeCode implements outcome.Coder.
func (e *kindError) OutcomeCode() (string, outcome.Kind) { return e.code, outcome.NotRun }

// ResolveError reports a claim check that could not be resolved. Err is
// ErrMissing, ErrCorrupt, ErrSubjectMismatch, ErrTooLarge or the transport
// error (a timeout, a closed connection) that interrupted the read;
// errors.Is sees through it.
type ResolveError struct {
	Object  string // object name from the Claim-Check header; empty when the header is malformed
	Subject string // subject of the received message
	Detail  string // what was wrong, for people
	Err     error
}

// Error describes the failure, naming the object and the subject.
func (e *ResolveError) Error() string {
	s := e.Err.Error()
	if e.Object != "" {
		s += fmt.Sprintf(": object %q", e.Object)
	}
	if e.Subject != "" {
		s += fmt.Sprintf(" (message on %q)", e.Subject)
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns Err (wrapped so that natssend's vocabulary reads a failed
// read as not run: package outcome), so errors.Is and errors.As see
// ErrMissing, ErrCorrupt, a timeout and the rest.
func (e *ResolveError) Unwrap() error { return &readFailure{e.Err} }

// readFailure is a ResolveError's cause as its Unwrap returns it: a read
// changes nothing (the payload stays stored; DeleteAfterRead deletes only
// after a complete, verified read), so its outcome is NotRun, with the
// code of the cause.
type readFailure struct{ err error }

func (e *readFailure) Error() string {
	if e.err == nil {
		return "claimcheck: read failed"
	}
	return e.err.Error()
}
func (e *readFailure) Unwrap() error { return e.err }

// OutcomeCode implements outcome.Coder.
func (e *readFailure) OutcomeCode() (string, outcome.Kind) { return "", outcome.NotRun }

// Permanent reports whether resolving the same message again with the
// same Store configuration cannot succeed: the object is missing, the
// reference is corrupt or bound to another subject, or the payload is
// above the receiver's maximum. Transport errors (timeouts, disconnects)
// are not permanent. ErrSubjectMismatch is permanent only for the Store's
// configuration (a receiver behind a subject transform resolves it with
// WithSubjectBinding(false)), which is why Consume Naks rather than Terms
// it.
func (e *ResolveError) Permanent() bool {
	return errors.Is(e.Err, ErrMissing) || errors.Is(e.Err, ErrCorrupt) || errors.Is(e.Err, ErrTooLarge)
}
