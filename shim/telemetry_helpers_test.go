package shim_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/natssend/natssend/internal/natstest"
)

// otelKit is a real SDK: a tracer provider with a span recorder, a meter
// provider with a manual reader, and the W3C propagator.
type otelKit struct {
	rec    *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
	prop   propagation.TextMapPropagator
}

func newOtelKit(t testing.TB) *otelKit {
	k := &otelKit{rec: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	k.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(k.rec))
	k.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(k.reader))
	k.prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	t.Cleanup(func() {
		_ = k.tp.Shutdown(context.Background())
		_ = k.mp.Shutdown(context.Background())
	})
	return k
}

// span waits for the ended span called name and returns it.
func (k *otelKit) span(t testing.TB, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found sdktrace.ReadOnlySpan
	natstest.Eventually(t, 10*time.Second, func() bool {
		for _, s := range k.rec.Ended() {
			if s.Name() == name {
				found = s
				return true
			}
		}
		return false
	}, "span "+name)
	return found
}

// spans returns the ended spans called name.
func (k *otelKit) spans(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range k.rec.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// attr returns the span's attribute key, or an invalid value.
func attr(s sdktrace.ReadOnlySpan, key string) attribute.Value {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// checkAttrs checks the span's string attributes.
func checkAttrs(t testing.TB, s sdktrace.ReadOnlySpan, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := attr(s, k); got.AsString() != v {
			t.Errorf("span %q: %s = %q, want %q", s.Name(), k, got.String(), v)
		}
	}
}

// counterValue sums the counter name's points whose attributes include want.
func (k *otelKit) counterValue(t testing.TB, name string, want ...attribute.KeyValue) (int64, bool) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := k.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var sum int64
	found := false
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					if hasAll(p.Attributes, want) {
						sum += p.Value
						found = true
					}
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					if hasAll(p.Attributes, want) {
						sum += int64(p.Count)
						found = true
					}
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					if hasAll(p.Attributes, want) {
						sum += p.Sum
						found = true
					}
				}
			}
		}
	}
	return sum, found
}

func hasAll(set attribute.Set, want []attribute.KeyValue) bool {
	for _, kv := range want {
		if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
			return false
		}
	}
	return true
}

// parentOf checks that child's parent is parent's span, remote when remote.
func parentOf(t testing.TB, child, parent sdktrace.ReadOnlySpan, remote bool) {
	t.Helper()
	if child.Parent().SpanID() != parent.SpanContext().SpanID() || child.SpanContext().TraceID() != parent.SpanContext().TraceID() {
		t.Fatalf("span %q (parent %v, trace %v) is not a child of %q (span %v, trace %v)", child.Name(),
			child.Parent().SpanID(), child.SpanContext().TraceID(), parent.Name(), parent.SpanContext().SpanID(), parent.SpanContext().TraceID())
	}
	if child.Parent().IsRemote() != remote {
		t.Errorf("span %q: parent remote = %v, want %v", child.Name(), child.Parent().IsRemote(), remote)
	}
}

func kindIs(t testing.TB, s sdktrace.ReadOnlySpan, k trace.SpanKind) {
	t.Helper()
	if s.SpanKind() != k {
		t.Errorf("span %q: kind %v, want %v", s.Name(), s.SpanKind(), k)
	}
}
