package shim_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
	"github.com/natssend/natssend/telemetry"
)

// BenchmarkTelemetry measures what telemetry adds per publish and per
// request: off (WithoutTelemetry; for the Publish functions, the global
// no-op providers) against the real SDK with every span sampled and
// recorded (a span recorder, a manual metric reader) and the W3C
// propagator, with the server and the responder in a child process.
func BenchmarkTelemetry(b *testing.B) {
	nc := connect(b, natstest.StartChild(b, "TestChildServer", nil, nil).URL)
	data := make([]byte, 128)
	k := newOtelKit(b)
	tracer := k.tp.Tracer("bench")
	parent := func() (context.Context, func()) {
		ctx, s := tracer.Start(context.Background(), "parent")
		return ctx, func() { s.End() }
	}
	b.Run("publish/off", func(b *testing.B) {
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if err := shim.PublishContext(ctx, nc, "publish.bench", data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("publish/sdk", func(b *testing.B) {
		tp, mp, p := otel.GetTracerProvider(), otel.GetMeterProvider(), otel.GetTextMapPropagator()
		otel.SetTracerProvider(k.tp)
		otel.SetMeterProvider(k.mp)
		otel.SetTextMapPropagator(k.prop)
		defer func() { otel.SetTracerProvider(tp); otel.SetMeterProvider(mp); otel.SetTextMapPropagator(p) }()
		ctx, end := parent()
		defer end()
		n := 0
		b.ReportAllocs()
		for b.Loop() {
			if err := shim.PublishContext(ctx, nc, "publish.bench", data); err != nil {
				b.Fatal(err)
			}
			if n++; n%256 == 0 { // keep the recorder's memory bounded
				b.StopTimer()
				k.rec.Reset()
				b.StartTimer()
			}
		}
	})
	off := shim.NewClient(nc, shim.WithTelemetry(telemetry.WithoutTelemetry()))
	on := shim.NewClient(nc, shim.WithTelemetry(telemetry.WithTracerProvider(k.tp), telemetry.WithMeterProvider(k.mp), telemetry.WithPropagators(k.prop)))
	for _, tc := range []struct {
		name string
		c    *shim.Client
	}{{"request/off", off}, {"request/sdk", on}} {
		b.Run(tc.name, func(b *testing.B) {
			ctx, end := parent()
			defer end()
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tc.c.Request(ctx, "svc", data); err != nil {
					b.Fatal(err)
				}
				if n++; n%256 == 0 {
					b.StopTimer()
					k.rec.Reset()
					b.StartTimer()
				}
			}
		})
	}
}
