package telemetry

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// With the global no-op providers, resolving, starting and ending an
// operation and injecting allocate nothing.
func TestNoopAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	h := nats.Header{"A": {"b"}}
	n := testing.AllocsPerRun(1000, func() {
		var c *Config
		tel := c.Resolve()
		if tel.Active() {
			t.Fatal("the global no-op providers are active")
		}
		ctx2, op := tel.Start(ctx, Producer, OperationPublish, "s", 1)
		_, _ = tel.Inject(ctx2, h)
		op.End(ctx2, nil, OutcomeOK, "")
	})
	if n != 0 {
		t.Fatalf("%.1f allocations", n)
	}
}

// Inject never modifies the caller's map, and refuses what nats.go
// cannot send.
func TestInjectCopiesAndChecks(t *testing.T) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	c := &Config{Propagator: propagation.TraceContext{}}
	c.Fix()
	h := nats.Header{"Own": {"v"}}
	out, ok := c.Resolve().Inject(ctx, h)
	if !ok || len(out.Get("Traceparent")) != 55 || out.Get("Own") != "v" || len(h) != 1 {
		t.Fatalf("injected %v (%v); caller's %v", out, ok, h)
	}
	if out, ok := c.Resolve().Inject(context.Background(), h); ok || len(out) != 1 {
		t.Fatalf("nothing to inject, got %v", out)
	}
}

func BenchmarkNoopResolve(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		var c *Config
		tel := c.Resolve()
		if tel.Active() {
			b.Fatal("active")
		}
		_, op := tel.Start(ctx, Producer, OperationPublish, "s", 1)
		op.End(ctx, nil, OutcomeOK, "")
	}
}
