package claimcheck

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"

	"github.com/natssend/natssend/internal/telemetry"
)

// tel is what the Store records now (the globals unless its options say
// otherwise; nothing for a nil Store).
func (s *Store) tel() telemetry.Tel {
	if s == nil {
		return telemetry.Tel{}
	}
	t := s.cfg.tel.Resolve()
	if s.nc != nil {
		t = t.WithInbox(s.nc.Opts.InboxPrefix)
	}
	return t
}

// outcomeOf is err's natssend.outcome value: nothing was published
// (ErrNotPublished) is not_run; any other error may have been.
func outcomeOf(err error) (outcome, code string) {
	switch {
	case err == nil:
		return telemetry.OutcomeOK, ""
	case errors.Is(err, ErrTooLarge):
		return telemetry.OutcomeNotRun, "PAYLOAD_TOO_LARGE"
	case errors.Is(err, ErrNotPublished):
		return telemetry.OutcomeNotRun, ""
	}
	return telemetry.OutcomeUnknown, ""
}

// startProducer starts a publish's Producer span and returns m, or a
// copy of m carrying its trace context (injected before any size
// decision; m is never modified).
func startProducer(ctx context.Context, t telemetry.Tel, m *nats.Msg, name string) (context.Context, telemetry.Op, *nats.Msg) {
	return t.Send(ctx, telemetry.Producer, name, m)
}

// endProducer ends a publish's span with err's outcome.
func endProducer(ctx context.Context, op *telemetry.Op, err error) {
	outcome, code := outcomeOf(err)
	op.End(ctx, err, outcome, code)
}

// startChild starts an Internal span for a claim check's upload or
// resolve, only within a span of the caller (never a new trace).
func (s *Store) startChild(ctx context.Context, name, subject string, size int) (context.Context, telemetry.Op) {
	if ctx == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, telemetry.Op{}
	}
	t := s.tel()
	return t.MetricsOnlyWithTracer().Start(ctx, telemetry.Internal, name, subject, size)
}

// stored records a claim check of size bytes stored for subject: the
// natssend.claimcheck.stored metrics and the size on ctx's span.
func (s *Store) stored(ctx context.Context, op *telemetry.Op, subject string, size int, err error) {
	op.SetAttributes(telemetry.KeyClaimCheckSize.Int(size))
	outcome, code := outcomeOf(notPublished(err))
	op.End(ctx, err, outcome, code)
	if err != nil {
		return
	}
	s.tel().ClaimCheck(ctx, subject, int64(size))
}

// startConsumer extracts the producer's trace context from m and starts
// the subscription helper's Consumer span.
func (s *Store) startConsumer(subject string, h nats.Header, size int) (context.Context, telemetry.Op, telemetry.Tel) {
	ctx := context.Background()
	t := s.tel()
	if !t.Active() {
		return ctx, telemetry.Op{}, t
	}
	ctx, op := t.Receive(ctx, telemetry.Consumer, telemetry.OperationProcess, telemetry.Received{Subject: subject, Header: h, BodySize: size})
	return ctx, op, t
}

// endConsumer ends a Consumer span: err is why the message did not reach
// the handler (nil when it did).
func endConsumer(ctx context.Context, op *telemetry.Op, err error) {
	outcome := telemetry.OutcomeOK
	if err != nil {
		outcome = telemetry.OutcomeNotRun
	}
	op.End(ctx, err, outcome, "")
}

// tracedMsg is m, or a copy of m whose header carries ctx's span (the
// Consumer span) as its trace context, for the handler to continue.
func tracedMsg(ctx context.Context, t telemetry.Tel, m *nats.Msg) *nats.Msg {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return m
	}
	if h, ok := t.Inject(ctx, m.Header); ok {
		return &nats.Msg{Subject: m.Subject, Reply: m.Reply, Header: h, Data: m.Data, Sub: m.Sub}
	}
	return m
}

// tracedJS is msg with Headers carrying ctx's span.
type tracedJS struct {
	jetstream.Msg
	hdr nats.Header
}

func (m *tracedJS) Headers() nats.Header { return m.hdr }

// endResolve ends a resolve's span with the payload's size.
func endResolve(ctx context.Context, op *telemetry.Op, size int, err error) {
	if err == nil {
		op.SetAttributes(telemetry.KeyClaimCheckSize.Int(size))
	}
	outcome := telemetry.OutcomeOK
	if err != nil {
		outcome = telemetry.OutcomeUnknown
	}
	op.End(ctx, err, outcome, "")
}

// tracedJSMsg is msg with its headers carrying ctx's span (see tracedMsg).
func tracedJSMsg(ctx context.Context, t telemetry.Tel, msg jetstream.Msg) jetstream.Msg {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return msg
	}
	h, ok := t.Inject(ctx, msg.Headers())
	if !ok {
		return msg
	}
	if rm, isResolved := msg.(*resolvedJSMsg); isResolved {
		rm.hdr = h
		return rm
	}
	return &tracedJS{Msg: msg, hdr: h}
}
