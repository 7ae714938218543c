package telemetry

import (
	"testing"

	"go.opentelemetry.io/otel"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// TestGlobalsIdleFollowsEachProvider: GlobalsIdle sees every change of
// the global providers at its next call, also when the other kind of
// check filled the snapshot (metricsOnly looks at the meter provider
// only).
func TestGlobalsIdleFollowsEachProvider(t *testing.T) {
	tp0, mp0, p0 := otel.GetTracerProvider(), otel.GetMeterProvider(), otel.GetTextMapPropagator()
	t.Cleanup(func() {
		otel.SetTracerProvider(tp0)
		otel.SetMeterProvider(mp0)
		otel.SetTextMapPropagator(p0)
	})
	tp, mp := sdktrace.NewTracerProvider(), sdkmetric.NewMeterProvider()
	check := func(step string, all, metrics bool) {
		t.Helper()
		// Each order of the two checks, so that either one fills the
		// snapshot the other then reads.
		if got := GlobalsIdle(false); got != all {
			t.Fatalf("%s: GlobalsIdle(false) = %v, want %v", step, got, all)
		}
		if got := GlobalsIdle(true); got != metrics {
			t.Fatalf("%s: GlobalsIdle(true) = %v, want %v", step, got, metrics)
		}
		if got := GlobalsIdle(true); got != metrics {
			t.Fatalf("%s: GlobalsIdle(true) again = %v, want %v", step, got, metrics)
		}
		if got := GlobalsIdle(false); got != all {
			t.Fatalf("%s: GlobalsIdle(false) again = %v, want %v", step, got, all)
		}
	}
	check("no SDK", true, true)
	otel.SetTracerProvider(tp)
	check("a tracer provider", false, true)
	otel.SetMeterProvider(mp)
	check("a tracer and a meter provider", false, false)
	otel.SetTracerProvider(tracenoop.NewTracerProvider())
	check("a meter provider", false, false)
	otel.SetMeterProvider(metricnoop.NewMeterProvider())
	check("no-op providers", true, true)
	otel.SetMeterProvider(mp)
	if GlobalsIdle(true) {
		t.Fatal("GlobalsIdle(true) missed a meter provider set after an idle check")
	}
}
