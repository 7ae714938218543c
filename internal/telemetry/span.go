package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Kind says what an operation is, for its span kind and metrics.
type Kind int

// The kinds of operation.
const (
	Producer Kind = iota // a publish
	Client               // a request or a stream
	Server               // a handler
	Consumer             // a subscription helper resolving a message
	Internal             // a claim check upload or resolve within another span
)

// Op is one operation being recorded; its zero value records nothing.
type Op struct {
	span  trace.Span // nil: not traced
	inst  *instruments
	kind  Kind
	name  string // messaging.operation.name
	dest  dest
	start time.Time
}

// Start begins operation name on subject (a span "{name} {destination}"
// of kind k, and the clock of its duration metric) and returns ctx with
// its span. The destination is the subject's name, or the template of a
// temporary one (see destOf). With nothing to record it returns ctx and
// a zero Op without allocating.
func (t Tel) Start(ctx context.Context, k Kind, name, subject string, bodySize int) (context.Context, Op) {
	if t.tracer == nil && t.inst == nil {
		return ctx, Op{}
	}
	op := Op{inst: t.inst, kind: k, name: name, dest: t.destOf(subject)}
	if t.inst != nil {
		op.start = time.Now()
	}
	if t.tracer != nil {
		kv := make([]attribute.KeyValue, 0, 8)
		kv = append(kv, systemNATS, KeyOperationName.String(name))
		switch k {
		case Producer, Client:
			kv = append(kv, opTypeSend)
		case Server, Consumer:
			kv = append(kv, opTypeProcess)
		}
		kv = op.dest.attrs(kv)
		kv = append(kv, KeySubject.String(subject), KeyBodySize.Int(bodySize))
		ctx, op.span = t.tracer.Start(ctx, name+" "+op.dest.label(),
			trace.WithSpanKind(spanKind(k)), trace.WithAttributes(kv...))
		ctx = context.WithValue(ctx, opKey{}, opMark{op.span, k})
	}
	return ctx, op
}

// opKey is the context key of natssend's innermost operation (an opMark).
type opKey struct{}

// opMark is natssend's innermost operation in a context.
type opMark struct {
	span trace.Span
	kind Kind
}

// SpanOf returns the span of the send natssend is making in ctx: its
// innermost operation when that is a publish or a request, nil otherwise.
// What natssend learns later in a send (the sizes it decides on) goes on
// that span, never on a caller's, nor on the span of a handler whose fn
// makes the send (fn's context carries it).
func SpanOf(ctx context.Context) trace.Span {
	if ctx == nil {
		return nil
	}
	m, _ := ctx.Value(opKey{}).(opMark)
	if m.kind != Producer && m.kind != Client {
		return nil
	}
	return m.span
}

// SetSize sets an int attribute (a size) on the span of the send natssend
// is making in ctx (SpanOf), if it records.
func SetSize(ctx context.Context, k attribute.Key, size int64) {
	if s := SpanOf(ctx); s != nil && s.IsRecording() {
		s.SetAttributes(k.Int64(size))
	}
}

func spanKind(k Kind) trace.SpanKind {
	switch k {
	case Producer:
		return trace.SpanKindProducer
	case Client:
		return trace.SpanKindClient
	case Server:
		return trace.SpanKindServer
	case Consumer:
		return trace.SpanKindConsumer
	}
	return trace.SpanKindInternal
}

// Recording reports whether op has a span that records.
func (op *Op) Recording() bool { return op.span != nil && op.span.IsRecording() }

// SetAttributes adds attributes to op's span, if any.
func (op *Op) SetAttributes(kv ...attribute.KeyValue) {
	if op.span != nil {
		op.span.SetAttributes(kv...)
	}
}

// Event adds an event to op's span, if any.
func (op *Op) Event(name string, kv ...attribute.KeyValue) {
	if op.span != nil && op.span.IsRecording() {
		op.span.AddEvent(name, trace.WithAttributes(kv...))
	}
}

// End ends op with its outcome (one of the Outcome constants) and the
// error code (empty when none): the span gets natssend.outcome, the code
// and status Error unless the outcome is ok; the duration and message
// counters are recorded.
func (op *Op) End(ctx context.Context, err error, outcome, code string) {
	if op.inst != nil {
		// Before the span ends: whoever waits for the span sees the metrics.
		op.inst.record(ctx, op, outcome, code)
	}
	if op.span != nil {
		kv := []attribute.KeyValue{KeyOutcome.String(outcome)}
		if code != "" {
			kv = append(kv, KeyErrorCode.String(code), KeyErrorType.String(code))
		}
		op.span.SetAttributes(kv...)
		if outcome != OutcomeOK {
			desc := outcome
			if err != nil {
				desc = err.Error()
				op.span.RecordError(err)
			}
			op.span.SetStatus(codes.Error, desc)
		}
		op.span.End()
	}
}

// KV is an attribute, for callers that build event attributes.
type KV = attribute.KeyValue

// MetricsOnly is t without spans and propagation.
func (t Tel) MetricsOnly() Tel { return Tel{inst: t.inst, subject: t.subject, inbox: t.inbox} }

// MetricsOnlyWithTracer is t for a child operation: its span, no
// metrics of its own (the parent operation's count).
func (t Tel) MetricsOnlyWithTracer() Tel {
	return Tel{tracer: t.tracer, subject: t.subject, inbox: t.inbox}
}

// Context returns ctx carrying op's span (ctx itself when op has none),
// as the span of natssend's operation (SpanOf).
func (op *Op) Context(ctx context.Context) context.Context {
	if op.span == nil {
		return ctx
	}
	return context.WithValue(trace.ContextWithSpan(ctx, op.span), opKey{}, opMark{op.span, op.kind})
}
