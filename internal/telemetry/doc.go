// Package telemetry is natssend's OpenTelemetry instrumentation, shared by
// shim and claimcheck: trace-context injection into and extraction from
// NATS headers (copy on write, a faulty propagator recovered), spans that
// follow the OpenTelemetry messaging conventions with natssend's outcome,
// and the metrics of the send paths.
//
// With no explicit provider it uses the global ones
// (otel.GetTracerProvider, otel.GetMeterProvider, otel.GetTextMapPropagator),
// resolved at every use. A provider that records nothing (the global ones
// before the application sets an SDK, or the noop packages) is detected and
// skipped, so an application without the SDK pays no allocation for it.
package telemetry
