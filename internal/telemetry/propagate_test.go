package telemetry

import (
	"context"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

func w3c() Tel {
	c := &Config{Propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}
	c.Fix()
	return c.Resolve()
}

func remoteCtx(t *testing.T) (context.Context, trace.SpanContext) {
	t.Helper()
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{7, 1}, SpanID: trace.SpanID{9, 2},
		TraceFlags: trace.FlagsSampled, TraceState: mustState(t, "k=v")})
	m, err := baggage.NewMember("user", "ana")
	if err != nil {
		t.Fatal(err)
	}
	b, err := baggage.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return baggage.ContextWithBaggage(trace.ContextWithSpanContext(context.Background(), sc), b), sc
}

func mustState(t *testing.T, s string) trace.TraceState {
	ts, err := trace.ParseTraceState(s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestInjectCanonicalKeysHeaderCarrierReads: the keys natssend writes are
// the canonical ones, exactly those propagation.HeaderCarrier reads, and
// a header map of either case is replaced rather than doubled.
func TestInjectCanonicalKeysHeaderCarrierReads(t *testing.T) {
	ctx, sc := remoteCtx(t)
	stale := "00-" + strings.Repeat("a", 32) + "-" + strings.Repeat("b", 16) + "-01"
	h := nats.Header{"traceparent": {stale}, "TRACESTATE": {"old=1"}, "Own": {"v"}}
	out, ok := w3c().Inject(ctx, h)
	if !ok {
		t.Fatal("nothing injected")
	}
	want := map[string]bool{"Traceparent": true, "Tracestate": true, "Baggage": true, "Own": true}
	if len(out) != len(want) {
		t.Fatalf("injected header %v, want exactly the keys %v", out, want)
	}
	for k := range out {
		if !want[k] {
			t.Errorf("key %q in %v", k, out)
		}
	}
	if len(h) != 3 || h.Get("traceparent") != stale {
		t.Fatalf("the caller's header was modified: %v", h)
	}
	// What a Go consumer does with a nats.Header: HeaderCarrier.
	got := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}).
		Extract(context.Background(), propagation.HeaderCarrier(out))
	gsc := trace.SpanContextFromContext(got)
	if gsc.TraceID() != sc.TraceID() || gsc.SpanID() != sc.SpanID() || !gsc.IsSampled() || gsc.TraceState().Get("k") != "v" {
		t.Fatalf("HeaderCarrier extracted %v, want %v", gsc, sc)
	}
	if v := baggage.FromContext(got).Member("user").Value(); v != "ana" {
		t.Fatalf("HeaderCarrier extracted baggage user=%q", v)
	}
}

// TestExtractReadsEveryCase: natssend continues a trace whatever case the
// producer wrote its keys in.
func TestExtractReadsEveryCase(t *testing.T) {
	ctx, sc := remoteCtx(t)
	tel := w3c()
	canonical, _ := tel.Inject(ctx, nil)
	for _, tc := range []struct {
		name string
		key  func(string) string
	}{
		{"canonical", func(k string) string { return k }},
		{"lower", strings.ToLower},
		{"upper", strings.ToUpper},
	} {
		h := nats.Header{}
		for k, v := range canonical {
			h[tc.key(k)] = v
		}
		// A HeaderCarrier producer's header, also as it does it.
		if tc.name == "canonical" {
			h = nats.Header{}
			propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}).Inject(ctx, propagation.HeaderCarrier(h))
		}
		got := tel.Extract(context.Background(), h)
		gsc := trace.SpanContextFromContext(got)
		if gsc.TraceID() != sc.TraceID() || gsc.SpanID() != sc.SpanID() || !gsc.IsRemote() {
			t.Errorf("%s keys %v: extracted %v, want %v", tc.name, h, gsc, sc)
		}
		if v := baggage.FromContext(got).Member("user").Value(); v != "ana" {
			t.Errorf("%s keys: baggage user=%q", tc.name, v)
		}
	}
}
