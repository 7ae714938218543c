package telemetry

import (
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// Attribute keys: the OpenTelemetry messaging conventions' (semconv
// v1.43.0), the messaging.nats.* names of NATS's own .NET client
// instrumentation, and natssend's.
const (
	KeySystem        = semconv.MessagingSystemKey
	KeyDestination   = semconv.MessagingDestinationNameKey
	KeyTemplate      = semconv.MessagingDestinationTemplateKey
	KeyTemporary     = semconv.MessagingDestinationTemporaryKey
	KeyOperationType = semconv.MessagingOperationTypeKey
	KeyOperationName = semconv.MessagingOperationNameKey
	KeyBodySize      = semconv.MessagingMessageBodySizeKey
	KeyEnvelopeSize  = semconv.MessagingMessageEnvelopeSizeKey
	KeyConsumerGroup = semconv.MessagingConsumerGroupNameKey
	KeyErrorType     = semconv.ErrorTypeKey

	KeySubject    = attribute.Key("messaging.nats.message.subject")
	KeyReplyTo    = attribute.Key("messaging.nats.message.reply_to")
	KeyQueueGroup = attribute.Key("messaging.nats.consumer.group")

	KeyOutcome        = attribute.Key("natssend.outcome")
	KeyErrorCode      = attribute.Key("natssend.error.code")
	KeyClaimCheckSize = attribute.Key("natssend.claimcheck.size")
	KeyAttempt        = attribute.Key("natssend.attempt")
	KeyStreamBytes    = attribute.Key("natssend.stream.bytes")
	KeyStreamRTT      = attribute.Key("natssend.stream.round_trip") // seconds, the least the responder measured
	KeyReplies        = attribute.Key("natssend.replies")
)

// Attribute values.
const (
	// SystemNATS is messaging.system: the registry has no value for NATS
	// yet; "nats" is what NATS's .NET client reports.
	SystemNATS = "nats"

	OutcomeOK       = "ok"
	OutcomeNotRun   = "not_run"
	OutcomeRejected = "rejected"
	OutcomeUnknown  = "unknown"
)

// Operation names (messaging.operation.name, the first word of a span's
// name).
const (
	OperationPublish   = "publish"
	OperationRequest   = "request"
	OperationStream    = "request_stream"
	OperationMany      = "request_many"
	OperationProcess   = "process"
	OperationRespond   = OperationProcess
	OperationStore     = "claimcheck_store"
	OperationResolve   = "claimcheck_resolve"
	OperationJSPublish = "jetstream_publish"
)

// Operation types (messaging.operation.type): the conventions' values.
var (
	opTypeSend    = semconv.MessagingOperationTypeSend
	opTypeProcess = semconv.MessagingOperationTypeProcess
	systemNATS    = KeySystem.String(SystemNATS)
)
