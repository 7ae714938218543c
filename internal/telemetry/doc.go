// Package telemetry is natssend's OpenTelemetry instrumentation, shared by
// shim and claimcheck: trace-context injection into and extraction from
// NATS headers (copy on write, canonical keys that
// propagation.HeaderCarrier reads, any case read, a faulty propagator
// recovered), spans that follow the OpenTelemetry messaging conventions
// (semconv v1.43.0, with the messaging.nats.* names of NATS's .NET client)
// with natssend's outcome, and the metrics of the send paths, whose
// destinations are bounded: an inbox is named by its template and marked
// temporary (dest.go).
//
// With no explicit provider it uses the global ones
// (otel.GetTracerProvider, otel.GetMeterProvider, otel.GetTextMapPropagator),
// resolved at every use. A provider that records nothing (the global ones
// before the application sets an SDK, or the noop packages) is detected and
// skipped, so an application without the SDK pays no allocation for it.
package telemetry
