package shim

import (
	"strings"

	itel "github.com/natssend/natssend/internal/telemetry"
	"github.com/natssend/natssend/telemetry"
)

// Telemetry (OpenTelemetry): without options, a Client, the Publish
// functions with a context and the handlers use the global tracer
// provider, meter provider and text-map propagator
// (otel.GetTracerProvider, otel.GetMeterProvider,
// otel.GetTextMapPropagator), resolved at every use. An application that
// never sets an SDK pays no allocation for it. The options below pass
// them explicitly, or turn telemetry off: one set, package telemetry's,
// for Client (WithTelemetry), handlers (Telemetry) and Stores.
// The Publish functions, which take no options, always use the globals;
// Publish and PublishMsg, which take no context, record metrics only.
//
// The trace context goes in canonical keys (Traceparent, Tracestate,
// Baggage), which propagation.HeaderCarrier(msg.Header) reads, and is read
// in any case. Inboxes (reply subjects, stream control subjects) are
// named by a template and marked messaging.destination.temporary, never
// by their unique subject. Subjects with IDs in them (orders.123.paid)
// make one metric series and span name per ID: map them to a template
// with telemetry.WithDestinationName, such as func(s
// string) string { return "orders.*.paid" }. docs/telemetry.md lists
// every span and metric with its attributes.

// WithTelemetry configures the Client's telemetry with the options of
// package telemetry, the set handlers (Telemetry) and claim-check Stores
// (claimcheck.WithTelemetry) take too. An invalid one makes NewClient's
// Client fail every call with ErrInvalidOption.
func WithTelemetry(opts ...telemetry.Option) Option {
	return func(c *Client) error {
		if err := telemetry.Apply(c.telemetry(), opts); err != nil {
			return invalidOption("%s", strings.TrimPrefix(err.Error(), ErrInvalidOption.Error()+": "))
		}
		return nil
	}
}

// Telemetry configures a handler's (or Service's) telemetry with the
// options of package telemetry, the set a Client (WithTelemetry) and a
// claim-check Store (claimcheck.WithTelemetry) take too. An invalid one is
// refused where the handler is built: see HandlerOption.
func Telemetry(opts ...telemetry.Option) HandlerOption {
	return func(o *handlerOpts) error {
		if err := telemetry.Apply(o.telemetry(), opts); err != nil {
			return invalidOption("%s", strings.TrimPrefix(err.Error(), ErrInvalidOption.Error()+": "))
		}
		return nil
	}
}

func (c *Client) telemetry() *itel.Config {
	if c.tel == nil {
		c.tel = &itel.Config{}
	}
	return c.tel
}

func (o *handlerOpts) telemetry() *itel.Config {
	if o.tel == nil {
		o.tel = &itel.Config{}
	}
	return o.tel
}
