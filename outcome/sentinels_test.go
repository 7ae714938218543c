package outcome_test

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/outcome"
)

// sentinels is every exported Err variable of nats.go and its jetstream
// package with the code the one table (CodeOf) gives it. INTERNAL is the
// table's answer for what says nothing about the outcome's cause in
// natssend's vocabulary (a key that exists, a consumer misconfigured, a
// TLS setting): those are listed too, so that a change of mind is a change
// here.
var sentinels = []struct {
	name string
	err  error
	code string
}{
	{"nats.ErrAccountAuthExpired", nats.ErrAccountAuthExpired, outcome.CodePermissionDenied},
	{"nats.ErrAsyncPublishTimeout", nats.ErrAsyncPublishTimeout, outcome.CodeDeadlineExceeded},
	{"nats.ErrAuthExpired", nats.ErrAuthExpired, outcome.CodePermissionDenied},
	{"nats.ErrAuthRevoked", nats.ErrAuthRevoked, outcome.CodePermissionDenied},
	{"nats.ErrAuthorization", nats.ErrAuthorization, outcome.CodePermissionDenied},
	{"nats.ErrBadBucket", nats.ErrBadBucket, outcome.CodeInvalidArgument},
	{"nats.ErrBadHeaderMsg", nats.ErrBadHeaderMsg, outcome.CodeInvalidArgument},
	{"nats.ErrBadObjectMeta", nats.ErrBadObjectMeta, outcome.CodeInvalidArgument},
	{"nats.ErrBadQueueName", nats.ErrBadQueueName, outcome.CodeInvalidArgument},
	{"nats.ErrBadRequest", nats.ErrBadRequest, outcome.CodeInvalidArgument},
	{"nats.ErrBadSubject", nats.ErrBadSubject, outcome.CodeInvalidArgument},
	{"nats.ErrBadSubscription", nats.ErrBadSubscription, outcome.CodeInvalidArgument},
	{"nats.ErrBadTimeout", nats.ErrBadTimeout, outcome.CodeInvalidArgument},
	{"nats.ErrBucketMalformed", nats.ErrBucketMalformed, outcome.CodeInternal},
	{"nats.ErrBucketNotFound", nats.ErrBucketNotFound, outcome.CodeNotFound},
	{"nats.ErrBucketRequired", nats.ErrBucketRequired, outcome.CodeInternal},
	{"nats.ErrCantAckIfConsumerAckNone", nats.ErrCantAckIfConsumerAckNone, outcome.CodeInternal},
	{"nats.ErrCantGetBucket", nats.ErrCantGetBucket, outcome.CodeInternal},
	{"nats.ErrChanArg", nats.ErrChanArg, outcome.CodeInvalidArgument},
	{"nats.ErrClientCertOrRootCAsRequired", nats.ErrClientCertOrRootCAsRequired, outcome.CodeInternal},
	{"nats.ErrClientIDNotSupported", nats.ErrClientIDNotSupported, outcome.CodeInternal},
	{"nats.ErrClientIPNotSupported", nats.ErrClientIPNotSupported, outcome.CodeInternal},
	{"nats.ErrConnectionClosed", nats.ErrConnectionClosed, outcome.CodeUnavailable},
	{"nats.ErrConnectionDraining", nats.ErrConnectionDraining, outcome.CodeUnavailable},
	{"nats.ErrConnectionNotTLS", nats.ErrConnectionNotTLS, outcome.CodeInternal},
	{"nats.ErrConnectionReconnecting", nats.ErrConnectionReconnecting, outcome.CodeUnavailable},
	{"nats.ErrConsumerConfigRequired", nats.ErrConsumerConfigRequired, outcome.CodeInternal},
	{"nats.ErrConsumerCreationResponseEmpty", nats.ErrConsumerCreationResponseEmpty, outcome.CodeInternal},
	{"nats.ErrConsumerDeleted", nats.ErrConsumerDeleted, outcome.CodeNotFound},
	{"nats.ErrConsumerInfoOnOrderedReset", nats.ErrConsumerInfoOnOrderedReset, outcome.CodeInternal},
	{"nats.ErrConsumerLeadershipChanged", nats.ErrConsumerLeadershipChanged, outcome.CodeUnavailable},
	{"nats.ErrConsumerMultipleFilterSubjectsNotSupported", nats.ErrConsumerMultipleFilterSubjectsNotSupported, outcome.CodeInternal},
	{"nats.ErrConsumerNameAlreadyInUse", nats.ErrConsumerNameAlreadyInUse, outcome.CodeInternal},
	{"nats.ErrConsumerNameRequired", nats.ErrConsumerNameRequired, outcome.CodeInternal},
	{"nats.ErrConsumerNotActive", nats.ErrConsumerNotActive, outcome.CodeInternal},
	{"nats.ErrConsumerNotFound", nats.ErrConsumerNotFound, outcome.CodeNotFound},
	{"nats.ErrContextAndTimeout", nats.ErrContextAndTimeout, outcome.CodeInvalidArgument},
	{"nats.ErrDigestMismatch", nats.ErrDigestMismatch, outcome.CodeDataLoss},
	{"nats.ErrDisconnected", nats.ErrDisconnected, outcome.CodeUnavailable},
	{"nats.ErrDrainTimeout", nats.ErrDrainTimeout, outcome.CodeUnavailable},
	{"nats.ErrDuplicateFilterSubjects", nats.ErrDuplicateFilterSubjects, outcome.CodeInvalidArgument},
	{"nats.ErrEmptyFilter", nats.ErrEmptyFilter, outcome.CodeInvalidArgument},
	{"nats.ErrFetchDisconnected", nats.ErrFetchDisconnected, outcome.CodeUnavailable},
	{"nats.ErrHeadersNotSupported", nats.ErrHeadersNotSupported, outcome.CodeInvalidArgument},
	{"nats.ErrHistoryToLarge", nats.ErrHistoryToLarge, outcome.CodeInternal},
	{"nats.ErrInvalidArg", nats.ErrInvalidArg, outcome.CodeInvalidArgument},
	{"nats.ErrInvalidBucketName", nats.ErrInvalidBucketName, outcome.CodeInvalidArgument},
	{"nats.ErrInvalidConnection", nats.ErrInvalidConnection, outcome.CodeInvalidArgument},
	{"nats.ErrInvalidConsumerName", nats.ErrInvalidConsumerName, outcome.CodeInvalidArgument},
	{"nats.ErrInvalidContext", nats.ErrInvalidContext, outcome.CodeInvalidArgument},
	{"nats.ErrInvalidDigestFormat", nats.ErrInvalidDigestFormat, outcome.CodeDataLoss},
	{"nats.ErrInvalidFilterSubject", nats.ErrInvalidFilterSubject, outcome.CodeInvalidArgument},
	{"nats.ErrInvalidJSAck", nats.ErrInvalidJSAck, outcome.CodeInternal},
	{"nats.ErrInvalidKey", nats.ErrInvalidKey, outcome.CodeInvalidArgument},
	{"nats.ErrInvalidMsg", nats.ErrInvalidMsg, outcome.CodeInvalidArgument},
	{"nats.ErrInvalidStoreName", nats.ErrInvalidStoreName, outcome.CodeInvalidArgument},
	{"nats.ErrInvalidStreamName", nats.ErrInvalidStreamName, outcome.CodeInvalidArgument},
	{"nats.ErrJetStreamNotEnabled", nats.ErrJetStreamNotEnabled, outcome.CodeUnavailable},
	{"nats.ErrJetStreamNotEnabledForAccount", nats.ErrJetStreamNotEnabledForAccount, outcome.CodeUnavailable},
	{"nats.ErrJetStreamPublisherClosed", nats.ErrJetStreamPublisherClosed, outcome.CodeUnavailable},
	{"nats.ErrJsonParse", nats.ErrJsonParse, outcome.CodeInternal},
	{"nats.ErrKeyDeleted", nats.ErrKeyDeleted, outcome.CodeNotFound},
	{"nats.ErrKeyExists", nats.ErrKeyExists, outcome.CodeInternal},
	{"nats.ErrKeyNotFound", nats.ErrKeyNotFound, outcome.CodeNotFound},
	{"nats.ErrKeyRevisionMismatch", nats.ErrKeyRevisionMismatch, outcome.CodeInternal},
	{"nats.ErrKeyValueConfigRequired", nats.ErrKeyValueConfigRequired, outcome.CodeInternal},
	{"nats.ErrKeyWatcherTimeout", nats.ErrKeyWatcherTimeout, outcome.CodeDeadlineExceeded},
	{"nats.ErrLinkNotAllowed", nats.ErrLinkNotAllowed, outcome.CodeInternal},
	{"nats.ErrMaxAccountConnectionsExceeded", nats.ErrMaxAccountConnectionsExceeded, outcome.CodeUnavailable},
	{"nats.ErrMaxConnectionsExceeded", nats.ErrMaxConnectionsExceeded, outcome.CodeUnavailable},
	{"nats.ErrMaxMessages", nats.ErrMaxMessages, outcome.CodePayloadTooLarge},
	{"nats.ErrMaxPayload", nats.ErrMaxPayload, outcome.CodePayloadTooLarge},
	{"nats.ErrMaxSubscriptionsExceeded", nats.ErrMaxSubscriptionsExceeded, outcome.CodeInternal},
	{"nats.ErrMixingWebsocketSchemes", nats.ErrMixingWebsocketSchemes, outcome.CodeInternal},
	{"nats.ErrMsgAlreadyAckd", nats.ErrMsgAlreadyAckd, outcome.CodeInvalidArgument},
	{"nats.ErrMsgNoReply", nats.ErrMsgNoReply, outcome.CodeInvalidArgument},
	{"nats.ErrMsgNotBound", nats.ErrMsgNotBound, outcome.CodeInvalidArgument},
	{"nats.ErrMsgNotFound", nats.ErrMsgNotFound, outcome.CodeNotFound},
	{"nats.ErrMultipleTLSConfigs", nats.ErrMultipleTLSConfigs, outcome.CodeInternal},
	{"nats.ErrNameRequired", nats.ErrNameRequired, outcome.CodeInvalidArgument},
	{"nats.ErrNeeds262", nats.ErrNeeds262, outcome.CodeInternal},
	{"nats.ErrNkeyAndUser", nats.ErrNkeyAndUser, outcome.CodeInternal},
	{"nats.ErrNkeyButNoSigCB", nats.ErrNkeyButNoSigCB, outcome.CodeInternal},
	{"nats.ErrNkeysNotSupported", nats.ErrNkeysNotSupported, outcome.CodeInternal},
	{"nats.ErrNoDeadlineContext", nats.ErrNoDeadlineContext, outcome.CodeInvalidArgument},
	{"nats.ErrNoEchoNotSupported", nats.ErrNoEchoNotSupported, outcome.CodeInvalidArgument},
	{"nats.ErrNoHeartbeat", nats.ErrNoHeartbeat, outcome.CodeDeadlineExceeded},
	{"nats.ErrNoInfoReceived", nats.ErrNoInfoReceived, outcome.CodeUnavailable},
	{"nats.ErrNoKeysFound", nats.ErrNoKeysFound, outcome.CodeNotFound},
	{"nats.ErrNoLinkToDeleted", nats.ErrNoLinkToDeleted, outcome.CodeInternal},
	{"nats.ErrNoLinkToLink", nats.ErrNoLinkToLink, outcome.CodeInternal},
	{"nats.ErrNoMatchingStream", nats.ErrNoMatchingStream, outcome.CodeNotFound},
	{"nats.ErrNoObjectsFound", nats.ErrNoObjectsFound, outcome.CodeNotFound},
	{"nats.ErrNoResponders", nats.ErrNoResponders, outcome.CodeNoResponders},
	{"nats.ErrNoServers", nats.ErrNoServers, outcome.CodeUnavailable},
	{"nats.ErrNoStreamResponse", nats.ErrNoStreamResponse, outcome.CodeNoResponders},
	{"nats.ErrNoUserCB", nats.ErrNoUserCB, outcome.CodeInternal},
	{"nats.ErrNotJSMessage", nats.ErrNotJSMessage, outcome.CodeInternal},
	{"nats.ErrObjectAlreadyExists", nats.ErrObjectAlreadyExists, outcome.CodeInternal},
	{"nats.ErrObjectConfigRequired", nats.ErrObjectConfigRequired, outcome.CodeInternal},
	{"nats.ErrObjectNotFound", nats.ErrObjectNotFound, outcome.CodeNotFound},
	{"nats.ErrObjectRequired", nats.ErrObjectRequired, outcome.CodeInternal},
	{"nats.ErrOverlappingFilterSubjects", nats.ErrOverlappingFilterSubjects, outcome.CodeInvalidArgument},
	{"nats.ErrPermissionViolation", nats.ErrPermissionViolation, outcome.CodePermissionDenied},
	{"nats.ErrPullSubscribeRequired", nats.ErrPullSubscribeRequired, outcome.CodeInternal},
	{"nats.ErrPullSubscribeToPushConsumer", nats.ErrPullSubscribeToPushConsumer, outcome.CodeInternal},
	{"nats.ErrReconnectBufExceeded", nats.ErrReconnectBufExceeded, outcome.CodeUnavailable},
	{"nats.ErrSecureConnRequired", nats.ErrSecureConnRequired, outcome.CodeInternal},
	{"nats.ErrSecureConnWanted", nats.ErrSecureConnWanted, outcome.CodeInternal},
	{"nats.ErrServerNotInPool", nats.ErrServerNotInPool, outcome.CodeInternal},
	{"nats.ErrSlowConsumer", nats.ErrSlowConsumer, outcome.CodeUnavailable},
	{"nats.ErrStaleConnection", nats.ErrStaleConnection, outcome.CodeUnavailable},
	{"nats.ErrStreamConfigRequired", nats.ErrStreamConfigRequired, outcome.CodeInternal},
	{"nats.ErrStreamNameAlreadyInUse", nats.ErrStreamNameAlreadyInUse, outcome.CodeInternal},
	{"nats.ErrStreamNameRequired", nats.ErrStreamNameRequired, outcome.CodeInternal},
	{"nats.ErrStreamNotFound", nats.ErrStreamNotFound, outcome.CodeNotFound},
	{"nats.ErrStreamSourceMultipleSubjectTransformsNotSupported", nats.ErrStreamSourceMultipleSubjectTransformsNotSupported, outcome.CodeInternal},
	{"nats.ErrStreamSourceNotSupported", nats.ErrStreamSourceNotSupported, outcome.CodeInternal},
	{"nats.ErrStreamSourceSubjectTransformNotSupported", nats.ErrStreamSourceSubjectTransformNotSupported, outcome.CodeInternal},
	{"nats.ErrStreamSubjectTransformNotSupported", nats.ErrStreamSubjectTransformNotSupported, outcome.CodeInternal},
	{"nats.ErrSubjectMismatch", nats.ErrSubjectMismatch, outcome.CodeInternal},
	{"nats.ErrSubscriptionClosed", nats.ErrSubscriptionClosed, outcome.CodeInternal},
	{"nats.ErrSyncSubRequired", nats.ErrSyncSubRequired, outcome.CodeInvalidArgument},
	{"nats.ErrTLS", nats.ErrTLS, outcome.CodeInternal},
	{"nats.ErrTimeout", nats.ErrTimeout, outcome.CodeDeadlineExceeded},
	{"nats.ErrTokenAlreadySet", nats.ErrTokenAlreadySet, outcome.CodeInternal},
	{"nats.ErrTooManyStalledMsgs", nats.ErrTooManyStalledMsgs, outcome.CodeInternal},
	{"nats.ErrTypeSubscription", nats.ErrTypeSubscription, outcome.CodeInvalidArgument},
	{"nats.ErrUpdateMetaDeleted", nats.ErrUpdateMetaDeleted, outcome.CodeInternal},
	{"nats.ErrUserButNoSigCB", nats.ErrUserButNoSigCB, outcome.CodeInternal},
	{"nats.ErrUserInfoAlreadySet", nats.ErrUserInfoAlreadySet, outcome.CodeInternal},
	{"nats.ErrWebSocketHeadersAlreadySet", nats.ErrWebSocketHeadersAlreadySet, outcome.CodeInternal},
	{"jetstream.ErrAsyncPublishReplySubjectSet", jetstream.ErrAsyncPublishReplySubjectSet, outcome.CodeInternal},
	{"jetstream.ErrAsyncPublishTimeout", jetstream.ErrAsyncPublishTimeout, outcome.CodeDeadlineExceeded},
	{"jetstream.ErrBadBucket", jetstream.ErrBadBucket, outcome.CodeInvalidArgument},
	{"jetstream.ErrBadObjectMeta", jetstream.ErrBadObjectMeta, outcome.CodeInvalidArgument},
	{"jetstream.ErrBadRequest", jetstream.ErrBadRequest, outcome.CodeInvalidArgument},
	{"jetstream.ErrBatchCompleted", jetstream.ErrBatchCompleted, outcome.CodeInternal},
	{"jetstream.ErrBucketExists", jetstream.ErrBucketExists, outcome.CodeInternal},
	{"jetstream.ErrBucketMalformed", jetstream.ErrBucketMalformed, outcome.CodeInternal},
	{"jetstream.ErrBucketNotFound", jetstream.ErrBucketNotFound, outcome.CodeNotFound},
	{"jetstream.ErrBucketRequired", jetstream.ErrBucketRequired, outcome.CodeInvalidArgument},
	{"jetstream.ErrCantGetBucket", jetstream.ErrCantGetBucket, outcome.CodeInternal},
	{"jetstream.ErrConnectionClosed", jetstream.ErrConnectionClosed, outcome.CodeUnavailable},
	{"jetstream.ErrConsumerAlreadyConsuming", jetstream.ErrConsumerAlreadyConsuming, outcome.CodeInternal},
	{"jetstream.ErrConsumerCreate", jetstream.ErrConsumerCreate, outcome.CodeInternal},
	{"jetstream.ErrConsumerCreationResponseEmpty", jetstream.ErrConsumerCreationResponseEmpty, outcome.CodeInternal},
	{"jetstream.ErrConsumerDeleted", jetstream.ErrConsumerDeleted, outcome.CodeNotFound},
	{"jetstream.ErrConsumerDoesNotExist", jetstream.ErrConsumerDoesNotExist, outcome.CodeNotFound},
	{"jetstream.ErrConsumerExists", jetstream.ErrConsumerExists, outcome.CodeInternal},
	{"jetstream.ErrConsumerHasActiveSubscription", jetstream.ErrConsumerHasActiveSubscription, outcome.CodeInternal},
	{"jetstream.ErrConsumerInvalidReset", jetstream.ErrConsumerInvalidReset, outcome.CodeInternal},
	{"jetstream.ErrConsumerLeadershipChanged", jetstream.ErrConsumerLeadershipChanged, outcome.CodeUnavailable},
	{"jetstream.ErrConsumerMultipleFilterSubjectsNotSupported", jetstream.ErrConsumerMultipleFilterSubjectsNotSupported, outcome.CodeInternal},
	{"jetstream.ErrConsumerNameAlreadyInUse", jetstream.ErrConsumerNameAlreadyInUse, outcome.CodeInternal},
	{"jetstream.ErrConsumerNotFound", jetstream.ErrConsumerNotFound, outcome.CodeNotFound},
	{"jetstream.ErrConsumerResetResponseEmpty", jetstream.ErrConsumerResetResponseEmpty, outcome.CodeInternal},
	{"jetstream.ErrDigestMismatch", jetstream.ErrDigestMismatch, outcome.CodeDataLoss},
	{"jetstream.ErrDuplicateFilterSubjects", jetstream.ErrDuplicateFilterSubjects, outcome.CodeInvalidArgument},
	{"jetstream.ErrEmptyFilter", jetstream.ErrEmptyFilter, outcome.CodeInvalidArgument},
	{"jetstream.ErrEndOfData", jetstream.ErrEndOfData, outcome.CodeInternal},
	{"jetstream.ErrHandlerRequired", jetstream.ErrHandlerRequired, outcome.CodeInvalidArgument},
	{"jetstream.ErrHistoryTooLarge", jetstream.ErrHistoryTooLarge, outcome.CodeInvalidArgument},
	{"jetstream.ErrInvalidBucketName", jetstream.ErrInvalidBucketName, outcome.CodeInvalidArgument},
	{"jetstream.ErrInvalidConsumerName", jetstream.ErrInvalidConsumerName, outcome.CodeInvalidArgument},
	{"jetstream.ErrInvalidDigestFormat", jetstream.ErrInvalidDigestFormat, outcome.CodeDataLoss},
	{"jetstream.ErrInvalidJSAck", jetstream.ErrInvalidJSAck, outcome.CodeInternal},
	{"jetstream.ErrInvalidJetStreamResponse", jetstream.ErrInvalidJetStreamResponse, outcome.CodeInternal},
	{"jetstream.ErrInvalidKey", jetstream.ErrInvalidKey, outcome.CodeInvalidArgument},
	{"jetstream.ErrInvalidOption", jetstream.ErrInvalidOption, outcome.CodeInvalidArgument},
	{"jetstream.ErrInvalidStoreName", jetstream.ErrInvalidStoreName, outcome.CodeInvalidArgument},
	{"jetstream.ErrInvalidStreamName", jetstream.ErrInvalidStreamName, outcome.CodeInvalidArgument},
	{"jetstream.ErrInvalidSubject", jetstream.ErrInvalidSubject, outcome.CodeInvalidArgument},
	{"jetstream.ErrJetStreamNotEnabled", jetstream.ErrJetStreamNotEnabled, outcome.CodeUnavailable},
	{"jetstream.ErrJetStreamNotEnabledForAccount", jetstream.ErrJetStreamNotEnabledForAccount, outcome.CodeUnavailable},
	{"jetstream.ErrJetStreamPublisherClosed", jetstream.ErrJetStreamPublisherClosed, outcome.CodeUnavailable},
	{"jetstream.ErrKeyDeleted", jetstream.ErrKeyDeleted, outcome.CodeNotFound},
	{"jetstream.ErrKeyExists", jetstream.ErrKeyExists, outcome.CodeInternal},
	{"jetstream.ErrKeyNotFound", jetstream.ErrKeyNotFound, outcome.CodeNotFound},
	{"jetstream.ErrKeyRevisionMismatch", jetstream.ErrKeyRevisionMismatch, outcome.CodeInternal},
	{"jetstream.ErrKeyValueConfigRequired", jetstream.ErrKeyValueConfigRequired, outcome.CodeInternal},
	{"jetstream.ErrLimitMarkerTTLNotSupported", jetstream.ErrLimitMarkerTTLNotSupported, outcome.CodeInternal},
	{"jetstream.ErrLinkNotAllowed", jetstream.ErrLinkNotAllowed, outcome.CodeInternal},
	{"jetstream.ErrMaxBytesExceeded", jetstream.ErrMaxBytesExceeded, outcome.CodeInternal},
	{"jetstream.ErrMaximumConsumersLimit", jetstream.ErrMaximumConsumersLimit, outcome.CodeInternal},
	{"jetstream.ErrMessageSchedulesDisabled", jetstream.ErrMessageSchedulesDisabled, outcome.CodeInternal},
	{"jetstream.ErrMirrorWithMsgSchedules", jetstream.ErrMirrorWithMsgSchedules, outcome.CodeInternal},
	{"jetstream.ErrMsgAlreadyAckd", jetstream.ErrMsgAlreadyAckd, outcome.CodeInvalidArgument},
	{"jetstream.ErrMsgDeleteUnsuccessful", jetstream.ErrMsgDeleteUnsuccessful, outcome.CodeInternal},
	{"jetstream.ErrMsgIteratorClosed", jetstream.ErrMsgIteratorClosed, outcome.CodeInternal},
	{"jetstream.ErrMsgNoReply", jetstream.ErrMsgNoReply, outcome.CodeInvalidArgument},
	{"jetstream.ErrMsgNotBound", jetstream.ErrMsgNotBound, outcome.CodeInvalidArgument},
	{"jetstream.ErrMsgNotFound", jetstream.ErrMsgNotFound, outcome.CodeNotFound},
	{"jetstream.ErrNameRequired", jetstream.ErrNameRequired, outcome.CodeInvalidArgument},
	{"jetstream.ErrNoHeartbeat", jetstream.ErrNoHeartbeat, outcome.CodeDeadlineExceeded},
	{"jetstream.ErrNoKeysFound", jetstream.ErrNoKeysFound, outcome.CodeNotFound},
	{"jetstream.ErrNoLinkToDeleted", jetstream.ErrNoLinkToDeleted, outcome.CodeInternal},
	{"jetstream.ErrNoLinkToLink", jetstream.ErrNoLinkToLink, outcome.CodeInternal},
	{"jetstream.ErrNoMessages", jetstream.ErrNoMessages, outcome.CodeInternal},
	{"jetstream.ErrNoObjectsFound", jetstream.ErrNoObjectsFound, outcome.CodeNotFound},
	{"jetstream.ErrNoStreamResponse", jetstream.ErrNoStreamResponse, outcome.CodeNoResponders},
	{"jetstream.ErrNotJSMessage", jetstream.ErrNotJSMessage, outcome.CodeInternal},
	{"jetstream.ErrNotPullConsumer", jetstream.ErrNotPullConsumer, outcome.CodeInternal},
	{"jetstream.ErrNotPushConsumer", jetstream.ErrNotPushConsumer, outcome.CodeInternal},
	{"jetstream.ErrObjectAlreadyExists", jetstream.ErrObjectAlreadyExists, outcome.CodeInternal},
	{"jetstream.ErrObjectConfigRequired", jetstream.ErrObjectConfigRequired, outcome.CodeInternal},
	{"jetstream.ErrObjectNotFound", jetstream.ErrObjectNotFound, outcome.CodeNotFound},
	{"jetstream.ErrObjectRequired", jetstream.ErrObjectRequired, outcome.CodeInvalidArgument},
	{"jetstream.ErrOrderConsumerUsedAsConsume", jetstream.ErrOrderConsumerUsedAsConsume, outcome.CodeInternal},
	{"jetstream.ErrOrderConsumerUsedAsFetch", jetstream.ErrOrderConsumerUsedAsFetch, outcome.CodeInternal},
	{"jetstream.ErrOrderedConsumerConcurrentRequests", jetstream.ErrOrderedConsumerConcurrentRequests, outcome.CodeInternal},
	{"jetstream.ErrOrderedConsumerNotCreated", jetstream.ErrOrderedConsumerNotCreated, outcome.CodeInternal},
	{"jetstream.ErrOrderedConsumerReset", jetstream.ErrOrderedConsumerReset, outcome.CodeInternal},
	{"jetstream.ErrOverlappingFilterSubjects", jetstream.ErrOverlappingFilterSubjects, outcome.CodeInvalidArgument},
	{"jetstream.ErrPinIDMismatch", jetstream.ErrPinIDMismatch, outcome.CodeInternal},
	{"jetstream.ErrSchedulePatternInvalid", jetstream.ErrSchedulePatternInvalid, outcome.CodeInternal},
	{"jetstream.ErrScheduleRollupInvalid", jetstream.ErrScheduleRollupInvalid, outcome.CodeInternal},
	{"jetstream.ErrScheduleSourceInvalid", jetstream.ErrScheduleSourceInvalid, outcome.CodeInternal},
	{"jetstream.ErrScheduleTTLInvalid", jetstream.ErrScheduleTTLInvalid, outcome.CodeInternal},
	{"jetstream.ErrScheduleTargetInvalid", jetstream.ErrScheduleTargetInvalid, outcome.CodeInternal},
	{"jetstream.ErrServerShutdown", jetstream.ErrServerShutdown, outcome.CodeUnavailable},
	{"jetstream.ErrSourceWithMsgSchedules", jetstream.ErrSourceWithMsgSchedules, outcome.CodeInternal},
	{"jetstream.ErrStreamMessageExceedsMaximum", jetstream.ErrStreamMessageExceedsMaximum, outcome.CodePayloadTooLarge},
	{"jetstream.ErrStreamNameAlreadyInUse", jetstream.ErrStreamNameAlreadyInUse, outcome.CodeInternal},
	{"jetstream.ErrStreamNameRequired", jetstream.ErrStreamNameRequired, outcome.CodeInvalidArgument},
	{"jetstream.ErrStreamNotFound", jetstream.ErrStreamNotFound, outcome.CodeNotFound},
	{"jetstream.ErrStreamSourceMultipleFilterSubjectsNotSupported", jetstream.ErrStreamSourceMultipleFilterSubjectsNotSupported, outcome.CodeInternal},
	{"jetstream.ErrStreamSourceNotSupported", jetstream.ErrStreamSourceNotSupported, outcome.CodeInternal},
	{"jetstream.ErrStreamSourceSubjectTransformNotSupported", jetstream.ErrStreamSourceSubjectTransformNotSupported, outcome.CodeInternal},
	{"jetstream.ErrStreamSubjectTransformNotSupported", jetstream.ErrStreamSubjectTransformNotSupported, outcome.CodeInternal},
	{"jetstream.ErrTTLOnDeleteNotSupported", jetstream.ErrTTLOnDeleteNotSupported, outcome.CodeInternal},
	{"jetstream.ErrTooManyStalledMsgs", jetstream.ErrTooManyStalledMsgs, outcome.CodeInternal},
	{"jetstream.ErrUpdateMetaDeleted", jetstream.ErrUpdateMetaDeleted, outcome.CodeInternal},
}

// TestEverySentinelThroughTheTable: each sentinel, bare and wrapped as
// callers see it (fmt.Errorf's %w), maps to its code.
func TestEverySentinelThroughTheTable(t *testing.T) {
	for _, s := range sentinels {
		if got := outcome.CodeOf(s.err); got != s.code {
			t.Errorf("CodeOf(%s) = %s, want %s", s.name, got, s.code)
		}
		if got := outcome.CodeOf(fmt.Errorf("doing something: %w", s.err)); got != s.code {
			t.Errorf("CodeOf(wrapped %s) = %s, want %s", s.name, got, s.code)
		}
		if d := outcome.Describe(s.err); d.Code != s.code || d.Outcome() != outcome.Unknown {
			t.Errorf("Describe(%s) = %s, %s; want %s, unknown (not natssend's: it may have run)", s.name, d.Code, d.Outcome(), s.code)
		}
	}
	for err, code := range map[error]string{context.Canceled: outcome.CodeCanceled, context.DeadlineExceeded: outcome.CodeDeadlineExceeded} {
		if got := outcome.CodeOf(err); got != code {
			t.Errorf("CodeOf(%v) = %s, want %s", err, got, code)
		}
	}
}

// TestSentinelListIsComplete: the list above names every exported Err
// variable in the nats.go source this module builds with (read from the
// module cache), so a sentinel a new nats.go adds fails here until it has
// its row.
func TestSentinelListIsComplete(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/nats-io/nats.go").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	dir := strings.TrimSpace(string(out))
	listed := map[string]bool{}
	for _, s := range sentinels {
		listed[s.name] = true
	}
	for pkg, d := range map[string]string{"nats": dir, "jetstream": filepath.Join(dir, "jetstream")} {
		for _, name := range errVars(t, d) {
			if !listed[pkg+"."+name] {
				t.Errorf("%s.%s has no row in sentinels", pkg, name)
			}
		}
	}
}

// errVars returns the exported variables named Err* declared in the Go
// files (tests excluded) of dir, less those documented as deprecated
// (nats.go no longer returns them).
func errVars(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var names []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				if strings.Contains(vs.Doc.Text(), "Deprecated:") {
					continue
				}
				for _, n := range vs.Names {
					if strings.HasPrefix(n.Name, "Err") && n.IsExported() {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	return names
}
