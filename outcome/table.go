package outcome

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A Coder is an error that knows its code and kind: the errors packages
// of natssend define where they fail (claimcheck's ErrMissing is
// NOT_FOUND and NotRun, for example). An empty code means the code of
// what the error wraps: the next Coder's in its chain, else CodeOf's.
type Coder interface {
	OutcomeCode() (code string, k Kind)
}

// coderOf walks err's tree in the order errors.As does and returns the
// kind of the first Coder, with the first non-empty code of any Coder
// in it; ok is false when err wraps no Coder.
func coderOf(err error) (code string, k Kind, ok bool) {
	var walk func(error) bool
	walk = func(err error) bool {
		if err == nil {
			return false
		}
		if c, is := err.(Coder); is {
			cc, ck := c.OutcomeCode()
			if !ok {
				k, ok = ck, true
			}
			if cc != "" {
				code = cc
				return true
			}
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			return walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	walk(err)
	return code, k, ok
}

// CodeOf is the one table from nats.go, JetStream and context errors to a
// code: what err, or anything it wraps, says about why an operation
// failed. CodeInternal when none of them says anything.
func CodeOf(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, nats.ErrPermissionViolation), errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired),
		errors.Is(err, nats.ErrAuthRevoked), errors.Is(err, nats.ErrAccountAuthExpired):
		return CodePermissionDenied
	case errors.Is(err, jetstream.ErrBucketNotFound), errors.Is(err, jetstream.ErrStreamNotFound), errors.Is(err, jetstream.ErrObjectNotFound),
		errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrConsumerNotFound), errors.Is(err, jetstream.ErrMsgNotFound),
		errors.Is(err, jetstream.ErrNoKeysFound), errors.Is(err, jetstream.ErrNoObjectsFound), errors.Is(err, jetstream.ErrConsumerDoesNotExist),
		errors.Is(err, jetstream.ErrConsumerDeleted), errors.Is(err, jetstream.ErrKeyDeleted),
		errors.Is(err, nats.ErrBucketNotFound), errors.Is(err, nats.ErrStreamNotFound), errors.Is(err, nats.ErrObjectNotFound),
		errors.Is(err, nats.ErrKeyNotFound), errors.Is(err, nats.ErrConsumerNotFound), errors.Is(err, nats.ErrMsgNotFound),
		errors.Is(err, nats.ErrNoKeysFound), errors.Is(err, nats.ErrNoObjectsFound), errors.Is(err, nats.ErrNoMatchingStream),
		errors.Is(err, nats.ErrConsumerDeleted), errors.Is(err, nats.ErrKeyDeleted):
		return CodeNotFound
	case errors.Is(err, jetstream.ErrJetStreamNotEnabled), errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount),
		errors.Is(err, nats.ErrJetStreamNotEnabled), errors.Is(err, nats.ErrJetStreamNotEnabledForAccount):
		// Before no responders: nothing answers a JetStream API without it.
		return CodeUnavailable
	case errors.Is(err, nats.ErrNoResponders), errors.Is(err, jetstream.ErrNoStreamResponse), errors.Is(err, nats.ErrNoStreamResponse):
		return CodeNoResponders
	case errors.Is(err, nats.ErrMaxPayload), errors.Is(err, jetstream.ErrStreamMessageExceedsMaximum), errors.Is(err, nats.ErrMaxMessages):
		return CodePayloadTooLarge
	case errors.Is(err, context.Canceled):
		return CodeCanceled
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout), errors.Is(err, jetstream.ErrNoHeartbeat),
		errors.Is(err, nats.ErrNoHeartbeat), errors.Is(err, jetstream.ErrAsyncPublishTimeout), errors.Is(err, nats.ErrAsyncPublishTimeout),
		errors.Is(err, nats.ErrKeyWatcherTimeout):
		return CodeDeadlineExceeded
	case errors.Is(err, nats.ErrBadSubject), errors.Is(err, nats.ErrBadHeaderMsg), errors.Is(err, nats.ErrInvalidMsg),
		errors.Is(err, nats.ErrInvalidArg), errors.Is(err, nats.ErrInvalidConnection), errors.Is(err, nats.ErrInvalidContext),
		errors.Is(err, nats.ErrBadQueueName), errors.Is(err, nats.ErrHeadersNotSupported), errors.Is(err, nats.ErrMsgNoReply),
		errors.Is(err, nats.ErrMsgNotBound), errors.Is(err, nats.ErrBadTimeout), errors.Is(err, nats.ErrBadSubscription),
		errors.Is(err, nats.ErrNoEchoNotSupported), errors.Is(err, nats.ErrTypeSubscription), errors.Is(err, nats.ErrMsgAlreadyAckd),
		errors.Is(err, jetstream.ErrInvalidStreamName), errors.Is(err, jetstream.ErrInvalidSubject), errors.Is(err, jetstream.ErrInvalidBucketName),
		errors.Is(err, jetstream.ErrInvalidKey), errors.Is(err, jetstream.ErrInvalidOption), errors.Is(err, jetstream.ErrBadObjectMeta),
		errors.Is(err, jetstream.ErrMsgAlreadyAckd), errors.Is(err, jetstream.ErrMsgNotBound), errors.Is(err, jetstream.ErrMsgNoReply),
		errors.Is(err, nats.ErrInvalidStreamName), errors.Is(err, nats.ErrInvalidBucketName), errors.Is(err, nats.ErrInvalidKey),
		errors.Is(err, nats.ErrInvalidConsumerName), errors.Is(err, nats.ErrInvalidFilterSubject),
		errors.Is(err, nats.ErrInvalidStoreName), errors.Is(err, nats.ErrBadObjectMeta), errors.Is(err, nats.ErrBadBucket),
		errors.Is(err, nats.ErrBadRequest), errors.Is(err, nats.ErrNameRequired), errors.Is(err, nats.ErrContextAndTimeout),
		errors.Is(err, nats.ErrNoDeadlineContext), errors.Is(err, nats.ErrChanArg), errors.Is(err, nats.ErrSyncSubRequired),
		errors.Is(err, nats.ErrEmptyFilter), errors.Is(err, nats.ErrDuplicateFilterSubjects), errors.Is(err, nats.ErrOverlappingFilterSubjects),
		errors.Is(err, jetstream.ErrInvalidConsumerName), errors.Is(err, jetstream.ErrInvalidStoreName), errors.Is(err, jetstream.ErrBadBucket),
		errors.Is(err, jetstream.ErrBadRequest), errors.Is(err, jetstream.ErrNameRequired), errors.Is(err, jetstream.ErrEmptyFilter),
		errors.Is(err, jetstream.ErrDuplicateFilterSubjects), errors.Is(err, jetstream.ErrOverlappingFilterSubjects),
		errors.Is(err, jetstream.ErrHandlerRequired), errors.Is(err, jetstream.ErrStreamNameRequired), errors.Is(err, jetstream.ErrBucketRequired),
		errors.Is(err, jetstream.ErrObjectRequired), errors.Is(err, jetstream.ErrHistoryTooLarge):
		return CodeInvalidArgument
	case errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, nats.ErrConnectionDraining), errors.Is(err, nats.ErrDisconnected),
		errors.Is(err, nats.ErrConnectionReconnecting), errors.Is(err, nats.ErrReconnectBufExceeded), errors.Is(err, nats.ErrNoServers),
		errors.Is(err, nats.ErrStaleConnection), errors.Is(err, nats.ErrDrainTimeout), errors.Is(err, nats.ErrSlowConsumer),
		errors.Is(err, jetstream.ErrServerShutdown), errors.Is(err, jetstream.ErrConnectionClosed), errors.Is(err, nats.ErrFetchDisconnected),
		errors.Is(err, nats.ErrJetStreamPublisherClosed), errors.Is(err, jetstream.ErrJetStreamPublisherClosed),
		errors.Is(err, nats.ErrConsumerLeadershipChanged), errors.Is(err, jetstream.ErrConsumerLeadershipChanged),
		errors.Is(err, nats.ErrMaxConnectionsExceeded), errors.Is(err, nats.ErrMaxAccountConnectionsExceeded), errors.Is(err, nats.ErrNoInfoReceived):
		return CodeUnavailable
	case errors.Is(err, jetstream.ErrDigestMismatch), errors.Is(err, jetstream.ErrInvalidDigestFormat), errors.Is(err, nats.ErrDigestMismatch),
		errors.Is(err, nats.ErrInvalidDigestFormat):
		return CodeDataLoss
	}
	return CodeInternal
}

// Describe returns the *Error that stands for err in natssend's one
// vocabulary: the *Error err wraps, if any; else, for an error of natssend
// that knows its code and kind (a Coder, such as claimcheck's), an *Error
// with them wrapping err; else an *Error wrapping err with Kind Unknown
// (the only safe assumption for an error natssend did not make) and the
// code CodeOf gives. errors.Is and errors.As see everything err matches.
// For nil it returns nil.
func Describe(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		if e == nil {
			// A typed nil: nothing says it did not run (see Outcome).
			return &Error{Code: CodeInternal, kind: Unknown, err: err}
		}
		return e
	}
	if code, k, ok := coderOf(err); ok {
		if code == "" {
			code = CodeOf(err)
		}
		return &Error{Code: code, kind: k, err: err}
	}
	return &Error{Code: CodeOf(err), kind: Unknown, err: err}
}

// Classify tells what a caller can know after err, an error of natssend:
// OK for nil, NotRun when the operation certainly did not happen, Unknown
// when it may have happened, Rejected when the responder answered with an
// error reply saying it refused the request. Errors that did not come from
// natssend are Unknown, the only safe assumption.
//
// Callers must reconcile Unknown before trying again: a timeout, a lost
// connection or an oversized reply can follow an operation that already
// ran, so a blind retry repeats its side effect.
func Classify(err error) Kind {
	if err == nil {
		return OK
	}
	return Describe(err).Outcome()
}

// MayHaveRun reports whether the operation behind err may have taken
// effect. It is false only when it certainly did not (NotRun) or when the
// responder answered that it refused the request (Rejected). A nil error
// means the operation ran, so MayHaveRun(nil) is true.
func MayHaveRun(err error) bool {
	switch Classify(err) {
	case NotRun, Rejected:
		return false
	}
	return true
}
