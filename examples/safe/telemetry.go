package orders

import (
	"context"
	"io"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// SetupTelemetry configures OpenTelemetry for the service: spans are
// written to w as JSON by the stdout exporter (use an OTLP exporter in
// production), and the W3C trace context propagates across NATS. natssend
// needs nothing else: the shim and claimcheck use the global providers,
// so one order's trace runs from the caller's request through the
// handler, and from a publish through its claim check to the subscriber.
// Call shutdown before exiting to flush the spans.
func SetupTelemetry(w io.Writer) (shutdown func(context.Context) error, err error) {
	exp, err := stdouttrace.New(stdouttrace.WithWriter(w))
	if err != nil {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return tp.Shutdown, nil
}
