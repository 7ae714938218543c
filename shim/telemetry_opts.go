package shim

import (
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/natssend/natssend/internal/telemetry"
)

// Telemetry (OpenTelemetry): without options, a Client, the Publish
// functions with a context and the handlers use the global tracer
// provider, meter provider and text-map propagator
// (otel.GetTracerProvider, otel.GetMeterProvider,
// otel.GetTextMapPropagator), resolved at every use. An application that
// never sets an SDK pays no allocation for it. The options below pass
// them explicitly, or turn telemetry off; they follow otelhttp's names.
// The Publish functions, which take no options, always use the globals;
// Publish and PublishMsg, which take no context, record metrics only.
//
// The trace context goes in canonical keys (Traceparent, Tracestate,
// Baggage), which propagation.HeaderCarrier(msg.Header) reads, and is read
// in any case. Inboxes (reply subjects, stream control subjects) are
// named by a template and marked messaging.destination.temporary, never
// by their unique subject. Subjects with IDs in them (orders.123.paid)
// make one metric series and span name per ID: map them to a template
// with WithDestinationName (HandlerDestinationName), such as func(s
// string) string { return "orders.*.paid" }. docs/telemetry.md lists
// every span and metric with its attributes.

// WithTracerProvider is a client-level Option: the Client's spans come
// from tp instead of the global tracer provider. tp must not be nil.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *Client) error {
		if tp == nil {
			return invalidOption("WithTracerProvider(nil): a nil provider")
		}
		c.telemetry().TracerProvider = tp
		return nil
	}
}

// WithMeterProvider is a client-level Option: the Client's metrics come
// from mp instead of the global meter provider. mp must not be nil.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *Client) error {
		if mp == nil {
			return invalidOption("WithMeterProvider(nil): a nil provider")
		}
		c.telemetry().MeterProvider = mp
		return nil
	}
}

// WithPropagators is a client-level Option: the Client injects the trace
// context into its requests' headers with p instead of the global
// text-map propagator. p must not be nil.
func WithPropagators(p propagation.TextMapPropagator) Option {
	return func(c *Client) error {
		if p == nil {
			return invalidOption("WithPropagators(nil): a nil propagator")
		}
		c.telemetry().Propagator = p
		return nil
	}
}

// WithoutTelemetry is a client-level Option: the Client records no spans
// and no metrics and injects no trace context, whatever the globals are.
func WithoutTelemetry() Option {
	return func(c *Client) error {
		c.telemetry().Off = true
		return nil
	}
}

// WithDestinationName is a client-level Option: f maps a subject to the
// messaging.destination.name of the Client's spans and metrics (and
// their span names), to keep their cardinality bounded when subjects
// carry IDs. f is not called for inboxes, which are named by their
// template. f must not be nil.
func WithDestinationName(f func(subject string) string) Option {
	return func(c *Client) error {
		if f == nil {
			return invalidOption("WithDestinationName(nil): a nil function")
		}
		c.telemetry().Subject = f
		return nil
	}
}

// HandlerTracerProvider makes the handler's server spans with tp instead
// of the global tracer provider. tp must not be nil.
func HandlerTracerProvider(tp trace.TracerProvider) HandlerOption {
	return func(o *handlerOpts) error {
		if tp == nil {
			return invalidOption("HandlerTracerProvider(nil): a nil provider")
		}
		o.telemetry().TracerProvider = tp
		return nil
	}
}

// HandlerMeterProvider records the handler's metrics with mp instead of
// the global meter provider. mp must not be nil.
func HandlerMeterProvider(mp metric.MeterProvider) HandlerOption {
	return func(o *handlerOpts) error {
		if mp == nil {
			return invalidOption("HandlerMeterProvider(nil): a nil provider")
		}
		o.telemetry().MeterProvider = mp
		return nil
	}
}

// HandlerPropagators extracts the caller's trace context from requests
// with p instead of the global text-map propagator. p must not be nil.
func HandlerPropagators(p propagation.TextMapPropagator) HandlerOption {
	return func(o *handlerOpts) error {
		if p == nil {
			return invalidOption("HandlerPropagators(nil): a nil propagator")
		}
		o.telemetry().Propagator = p
		return nil
	}
}

// HandlerWithoutTelemetry makes the handler record no spans and no
// metrics and extract no trace context, whatever the globals are.
func HandlerWithoutTelemetry() HandlerOption {
	return func(o *handlerOpts) error {
		o.telemetry().Off = true
		return nil
	}
}

// HandlerDestinationName maps a request's subject to the
// messaging.destination.name of the handler's spans and metrics (see
// WithDestinationName). f must not be nil.
func HandlerDestinationName(f func(subject string) string) HandlerOption {
	return func(o *handlerOpts) error {
		if f == nil {
			return invalidOption("HandlerDestinationName(nil): a nil function")
		}
		o.telemetry().Subject = f
		return nil
	}
}

func (c *Client) telemetry() *telemetry.Config {
	if c.tel == nil {
		c.tel = &telemetry.Config{}
	}
	return c.tel
}

func (o *handlerOpts) telemetry() *telemetry.Config {
	if o.tel == nil {
		o.tel = &telemetry.Config{}
	}
	return o.tel
}
