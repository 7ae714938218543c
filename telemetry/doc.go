// Package telemetry is the one set of OpenTelemetry options of natssend.
// The same options configure a Client (shim.WithTelemetry), a handler or
// Service (shim.Telemetry) and a claim-check Store
// (claimcheck.WithTelemetry):
//
//	tel := []telemetry.Option{
//		telemetry.WithTracerProvider(tp),
//		telemetry.WithMeterProvider(mp),
//		telemetry.WithDestinationName(func(string) string { return "orders.*" }),
//	}
//	client := shim.NewClient(nc, shim.WithTelemetry(tel...))
//	sub, err := shim.Serve(nc, "orders.*", shim.Unary(fn, shim.Telemetry(tel...)))
//	store, err := claimcheck.New(ctx, js, claimcheck.WithTelemetry(tel...))
//
// Without options natssend uses the global tracer provider, meter provider
// and text-map propagator (otel.GetTracerProvider, otel.GetMeterProvider,
// otel.GetTextMapPropagator), resolved at every use, and an application
// that never sets an SDK pays no allocation for them. The names follow
// otelhttp's and otelgrpc's. docs/telemetry.md lists every span and metric
// with its attributes.
//
// An invalid option (a nil provider, propagator or function) makes the
// constructor that is given it fail with an error that wraps
// shim.ErrInvalidOption (which is claimcheck.ErrInvalidOption).
package telemetry
