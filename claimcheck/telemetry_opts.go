package claimcheck

import (
	"fmt"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/natssend/natssend/internal/telemetry"
)

// Telemetry (OpenTelemetry): without options, a Store uses the global
// tracer provider, meter provider and text-map propagator, resolved at
// every use. PublishMsg and PublishJetStream make a Producer span and
// inject its trace context into the message (the reference of a claim
// check carries it) before deciding whether it fits; the upload and a
// resolve within a traced operation are child spans; the subscription
// helpers (Subscribe, QueueSubscribe, Consume, Messages) extract it and
// make a Consumer span, which the message handed to the handler carries
// in its headers (extract it with the propagator, for example with
// propagation.HeaderCarrier(m.Header), to continue the trace: the keys are
// written in canonical form, Traceparent, and read in any case).
// Claim checks stored are counted (natssend.claimcheck.stored, and their
// bytes natssend.claimcheck.stored.size).

// WithTracerProvider makes the Store's spans with tp instead of the global
// tracer provider. tp must not be nil.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) error {
		if tp == nil {
			return fmt.Errorf("%w: claimcheck: nil tracer provider", ErrInvalidOption)
		}
		c.telemetry().TracerProvider = tp
		return nil
	}
}

// WithMeterProvider records the Store's metrics with mp instead of the
// global meter provider. mp must not be nil.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) error {
		if mp == nil {
			return fmt.Errorf("%w: claimcheck: nil meter provider", ErrInvalidOption)
		}
		c.telemetry().MeterProvider = mp
		return nil
	}
}

// WithPropagators injects and extracts the trace context with p instead
// of the global text-map propagator. p must not be nil.
func WithPropagators(p propagation.TextMapPropagator) Option {
	return func(c *config) error {
		if p == nil {
			return fmt.Errorf("%w: claimcheck: nil propagator", ErrInvalidOption)
		}
		c.telemetry().Propagator = p
		return nil
	}
}

// WithoutTelemetry makes the Store record no spans and no metrics and
// propagate no trace context, whatever the globals are.
func WithoutTelemetry() Option {
	return func(c *config) error {
		c.telemetry().Off = true
		return nil
	}
}

// WithDestinationName maps a subject to the messaging.destination.name
// of the Store's spans and metrics, to keep their cardinality bounded
// when subjects carry IDs. f is not called for inboxes (a claim-checked
// reply's subject), which are named by their template. f must not be nil.
func WithDestinationName(f func(subject string) string) Option {
	return func(c *config) error {
		if f == nil {
			return fmt.Errorf("%w: claimcheck: nil destination name function", ErrInvalidOption)
		}
		c.telemetry().Subject = f
		return nil
	}
}

func (c *config) telemetry() *telemetry.Config {
	if c.tel == nil {
		c.tel = &telemetry.Config{}
	}
	return c.tel
}
