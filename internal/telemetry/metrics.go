package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Metric names: the OpenTelemetry messaging conventions' and natssend's.
const (
	MetricOperationDuration = "messaging.client.operation.duration"
	MetricProcessDuration   = "messaging.process.duration"
	MetricSent              = "messaging.client.sent.messages"
	MetricConsumed          = "messaging.client.consumed.messages"
	MetricClaimChecks       = "natssend.claimcheck.stored"
	MetricClaimCheckBytes   = "natssend.claimcheck.stored.size"
	MetricRefusals          = "natssend.limit.refusals"
	MetricAttempts          = "natssend.call.attempts"
	MetricFaults            = "natssend.telemetry.errors"
	MetricCleanupFailures   = "natssend.claimcheck.cleanup.failures"
)

// instruments are the instruments of one meter. An instrument the meter
// failed to make is a no-op one (the metric API's contract).
type instruments struct {
	duration, process metric.Float64Histogram
	sent, consumed    metric.Int64Counter
	ccCount, ccBytes  metric.Int64Counter
	refusals          metric.Int64Counter
	attempts          metric.Int64Histogram
	faults            metric.Int64Counter
	cleanup           metric.Int64Counter
}

func newInstruments(m metric.Meter) *instruments {
	in := &instruments{}
	in.duration, _ = m.Float64Histogram(MetricOperationDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of a publish, request or stream, until its outcome is known."),
		metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10))
	in.process, _ = m.Float64Histogram(MetricProcessDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of a handler or consumer processing one message."),
		metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10))
	in.sent, _ = m.Int64Counter(MetricSent, metric.WithUnit("{message}"),
		metric.WithDescription("Messages a producer or client attempted to send."))
	in.consumed, _ = m.Int64Counter(MetricConsumed, metric.WithUnit("{message}"),
		metric.WithDescription("Messages delivered to a handler or consumer."))
	in.ccCount, _ = m.Int64Counter(MetricClaimChecks, metric.WithUnit("{claim_check}"),
		metric.WithDescription("Messages stored as claim checks."))
	in.ccBytes, _ = m.Int64Counter(MetricClaimCheckBytes, metric.WithUnit("By"),
		metric.WithDescription("Bytes stored as claim checks."))
	in.refusals, _ = m.Int64Counter(MetricRefusals, metric.WithUnit("{message}"),
		metric.WithDescription("Messages refused because they exceed the limit and could not be claim-checked."))
	in.attempts, _ = m.Int64Histogram(MetricAttempts, metric.WithUnit("{attempt}"),
		metric.WithDescription("Attempts made by one call with Attempts."),
		metric.WithExplicitBucketBoundaries(1, 2, 3, 4, 5, 8, 16))
	in.faults, _ = m.Int64Counter(MetricFaults, metric.WithUnit("{fault}"),
		metric.WithDescription("Propagator faults recovered (the message was sent without its trace context)."))
	in.cleanup, _ = m.Int64Counter(MetricCleanupFailures, metric.WithUnit("{payload}"),
		metric.WithDescription("Stored payloads a caller could not delete (the bucket's TTL removes them)."))
	return in
}

// record records op's metrics. Their attributes are those of bounded
// cardinality only: the system, the operation's name, its destination's
// name or template, the outcome and the error code.
func (in *instruments) record(ctx context.Context, op *Op, outcome, code string) {
	kv := make([]attribute.KeyValue, 0, 6)
	kv = append(kv, systemNATS, KeyOperationName.String(op.name))
	kv = op.dest.attrs(kv)
	kv = append(kv, KeyOutcome.String(outcome))
	if code != "" {
		kv = append(kv, KeyErrorType.String(code))
	}
	set := metric.WithAttributeSet(attribute.NewSet(kv...))
	d := time.Since(op.start).Seconds()
	switch op.kind {
	case Server, Consumer:
		in.process.Record(ctx, d, set)
		in.consumed.Add(ctx, 1, set)
	case Producer, Client:
		in.duration.Record(ctx, d, set)
		in.sent.Add(ctx, 1, set)
	}
	if code == "PAYLOAD_TOO_LARGE" {
		in.refusals.Add(ctx, 1, set)
	}
}

// destSet is the attribute set of a metric about subject: the system and
// the destination.
func (t Tel) destSet(subject string) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(t.destOf(subject).attrs([]attribute.KeyValue{systemNATS})...))
}

// ClaimCheck records a stored claim check of size bytes on subject, and
// adds natssend.claimcheck.size to the span of natssend's operation in ctx.
func (t Tel) ClaimCheck(ctx context.Context, subject string, size int64) {
	SetSize(ctx, KeyClaimCheckSize, size)
	if t.inst == nil {
		return
	}
	set := t.destSet(subject)
	t.inst.ccCount.Add(ctx, 1, set)
	t.inst.ccBytes.Add(ctx, size, set)
}

// Attempts records the attempts one call made.
func (t Tel) Attempts(ctx context.Context, subject string, n int) {
	if t.inst == nil {
		return
	}
	t.inst.attempts.Record(ctx, int64(n), t.destSet(subject))
}

// CleanupFailed records a stored payload that a caller could not delete
// (its clean-up failed with an error of type kind: a code), and adds an
// event with the error to the span of the operation in ctx, if any.
func (t Tel) CleanupFailed(ctx context.Context, kind string, err error) {
	if span := SpanOf(ctx); span != nil && span.IsRecording() {
		span.AddEvent("natssend.claimcheck.cleanup_failed", trace.WithAttributes(KeyErrorType.String(kind), attribute.String("exception.message", err.Error())))
	}
	if t.inst == nil {
		return
	}
	t.inst.cleanup.Add(ctx, 1, metric.WithAttributes(systemNATS, KeyErrorType.String(kind)))
}

func (t Tel) fault(ctx context.Context, kind string) {
	if t.inst == nil {
		return
	}
	t.inst.faults.Add(ctx, 1, metric.WithAttributes(KeyErrorType.String(kind)))
}
