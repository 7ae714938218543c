package telemetry

import (
	"fmt"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/natssend/natssend/internal/telemetry"
)

// An Option configures the telemetry of a Client, a handler or a Store:
// pass it to shim.WithTelemetry, shim.Telemetry or
// claimcheck.WithTelemetry. Later options override earlier ones.
type Option func(*telemetry.Config) error

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{telemetry.ErrInvalidOption}, args...)...)
}

// WithTracerProvider makes the spans with tp instead of the global tracer
// provider. tp must not be nil.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *telemetry.Config) error {
		if tp == nil {
			return invalid("WithTracerProvider(nil): a nil provider")
		}
		c.TracerProvider = tp
		return nil
	}
}

// WithMeterProvider records the metrics with mp instead of the global
// meter provider. mp must not be nil.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *telemetry.Config) error {
		if mp == nil {
			return invalid("WithMeterProvider(nil): a nil provider")
		}
		c.MeterProvider = mp
		return nil
	}
}

// WithPropagators injects the trace context into the messages sent (and
// extracts it from those received) with p instead of the global text-map
// propagator. p must not be nil.
func WithPropagators(p propagation.TextMapPropagator) Option {
	return func(c *telemetry.Config) error {
		if p == nil {
			return invalid("WithPropagators(nil): a nil propagator")
		}
		c.Propagator = p
		return nil
	}
}

// WithDestinationName maps a subject to the messaging.destination.name of
// the spans and metrics (and their span names), to keep their cardinality
// bounded when subjects carry IDs (orders.123.paid): for example
// func(s string) string { return "orders.*.paid" }. f is not called for
// inboxes, which are named by their template. f must not be nil.
func WithDestinationName(f func(subject string) string) Option {
	return func(c *telemetry.Config) error {
		if f == nil {
			return invalid("WithDestinationName(nil): a nil function")
		}
		c.Subject = f
		return nil
	}
}

// WithoutTelemetry records no spans and no metrics and propagates no
// trace context, whatever the globals are.
func WithoutTelemetry() Option {
	return func(c *telemetry.Config) error {
		c.Off = true
		return nil
	}
}

// Apply applies opts to c in order (nil options are skipped); it is how
// natssend's packages use the options.
func Apply(c *telemetry.Config, opts []Option) error {
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(c); err != nil {
			return err
		}
	}
	return nil
}
