package shim_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
	"github.com/natssend/natssend/telemetry"
)

// useGlobalKit sets a real SDK as the global providers and propagator
// for the test (not parallel: the globals are the process's), and puts
// the previous ones back at the end.
func useGlobalKit(t *testing.T) *otelKit {
	k := newOtelKit(t)
	tp, mp, p := otel.GetTracerProvider(), otel.GetMeterProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(k.tp)
	otel.SetMeterProvider(k.mp)
	otel.SetTextMapPropagator(k.prop)
	t.Cleanup(func() {
		otel.SetTracerProvider(tp)
		otel.SetMeterProvider(mp)
		otel.SetTextMapPropagator(p)
	})
	return k
}

func TestTelemetryGlobalPublishToHandler(t *testing.T) {
	k := useGlobalKit(t)
	s := natstest.Start(t)
	got := make(chan trace.SpanContext, 1)
	// A Handler without options uses the globals, resolved at use.
	sub := serve(t, s, "tel.pub", shim.Handler(func(ctx context.Context, req *nats.Msg) ([]byte, error) {
		got <- trace.SpanContextFromContext(ctx)
		return nil, nil
	}))
	_ = sub
	nc := connect(t, s.URL())
	ctx, parent := k.tp.Tracer("test").Start(context.Background(), "parent")
	h := nats.Header{"Own": {"v"}}
	if err := shim.PublishMsgContext(ctx, nc, &nats.Msg{Subject: "tel.pub", Data: []byte("abc"), Header: h}); err != nil {
		t.Fatal(err)
	}
	parent.End()
	if len(h) != 1 {
		t.Fatalf("the caller's header was modified: %v", h)
	}
	var sc trace.SpanContext
	select {
	case sc = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery")
	}
	ps := k.span(t, "publish tel.pub")
	kindIs(t, ps, trace.SpanKindProducer)
	parentOf(t, ps, k.span(t, "parent"), false)
	checkAttrs(t, ps, map[string]string{"messaging.system": "nats", "messaging.operation.type": "send", "natssend.outcome": "ok"})
	hs := k.span(t, "process tel.pub")
	parentOf(t, hs, ps, true)
	if sc.SpanID() != hs.SpanContext().SpanID() {
		t.Fatal("fn's context does not carry the server span")
	}
	// Publish without a context: no span, nothing injected.
	if err := shim.Publish(nc, "tel.pub", nil); err != nil {
		t.Fatal(err)
	}
	<-got
	if n := len(k.spans("publish tel.pub")); n != 1 {
		t.Fatalf("%d publish spans, want 1 (Publish has no context)", n)
	}
}

// A publish that fits only without its trace header is refused (no
// JetStream here, so no claim check), never sent to close the connection.
func TestTelemetryGlobalPublishSizeBoundary(t *testing.T) {
	k := useGlobalKit(t)
	const limit = 512
	s := natstest.Start(t, natstest.MaxPayload(limit))
	nc := connect(t, s.URL())
	sub, err := nc.SubscribeSync("tel.psize")
	if err != nil {
		t.Fatal(err)
	}
	ctx, parent := k.tp.Tracer("test").Start(context.Background(), "parent")
	defer parent.End()
	hdr := shim.HeaderSize(nats.Header{"Traceparent": {strings.Repeat("0", 55)}})
	if err := shim.PublishContext(ctx, nc, "tel.psize", make([]byte, limit-hdr)); err != nil {
		t.Fatalf("exactly %d bytes with the trace header: %v", limit, err)
	}
	m, err := sub.NextMsg(10 * time.Second)
	if err != nil || len(m.Header.Get("Traceparent")) != 55 || len(m.Data) != limit-hdr {
		t.Fatalf("delivered %v (header %v), err %v", m, m.Header, err)
	}
	err = shim.PublishContext(ctx, nc, "tel.psize", make([]byte, limit-hdr+1))
	if !errors.Is(err, shim.ErrPayloadTooLarge) || shim.Classify(err) != shim.OutcomeNotRun {
		t.Fatalf("one byte over with the trace header: %v", err)
	}
	if nc.IsClosed() || !nc.IsConnected() {
		t.Fatal("the connection did not survive")
	}
	spans := k.spans("publish tel.psize")
	if len(spans) != 2 || attr(spans[1], "natssend.outcome").AsString() != "not_run" || attr(spans[1], "natssend.error.code").AsString() != shim.CodePayloadTooLarge {
		t.Fatalf("%d spans; the refused one: %v", len(spans), spans[len(spans)-1].Attributes())
	}
}

// panicky is a propagator whose Inject panics or writes a header nats.go
// cannot send.
type panicky struct{ mode string }

func (p panicky) Inject(ctx context.Context, c propagation.TextMapCarrier) {
	switch p.mode {
	case "panic":
		panic("propagator bug")
	case "key":
		c.Set("bad key:", "v")
	case "value":
		c.Set("x-trace", "a\r\nPUB evil 0")
	}
}
func (p panicky) Extract(ctx context.Context, c propagation.TextMapCarrier) context.Context {
	if p.mode == "panic" {
		panic("propagator bug")
	}
	return ctx
}
func (panicky) Fields() []string { return []string{"x-trace"} }

func TestTelemetryFaultyPropagatorDoesNotBreakSends(t *testing.T) {
	s := natstest.Start(t)
	k := newOtelKit(t)
	for _, mode := range []string{"panic", "key", "value"} {
		subject := "tel.fault." + mode
		var hdr nats.Header
		serve(t, s, subject, shim.Handler(func(ctx context.Context, req *nats.Msg) ([]byte, error) {
			hdr = req.Header
			return []byte("ok"), nil
		}, shim.Telemetry(telemetry.WithPropagators(panicky{mode}), telemetry.WithTracerProvider(k.tp))))
		c := shim.NewClient(connect(t, s.URL()), shim.WithTelemetry(telemetry.WithPropagators(panicky{mode}), telemetry.WithTracerProvider(k.tp), telemetry.WithMeterProvider(k.mp)))
		ctx, parent := k.tp.Tracer("test").Start(context.Background(), "parent")
		r, err := c.Request(ctx, subject, []byte("x"))
		parent.End()
		if err != nil || string(r.Data) != "ok" {
			t.Fatalf("%s: %v", mode, err)
		}
		if len(hdr) != 2 { // the timeout and limit headers only
			t.Errorf("%s: the request carried %v", mode, hdr)
		}
	}
	if n, _ := k.counterValue(t, "natssend.telemetry.errors"); n != 3 {
		t.Errorf("faults counted %d, want 3", n)
	}
}

func TestTelemetryMalformedTraceparentStartsANewTrace(t *testing.T) {
	s := natstest.Start(t)
	k := newOtelKit(t)
	serve(t, s, "tel.bad", shim.Handler(func(ctx context.Context, req *nats.Msg) ([]byte, error) {
		return []byte("ran"), nil
	}, shim.Telemetry(telemetry.WithPropagators(propagation.TraceContext{}), telemetry.WithTracerProvider(k.tp))))
	nc := connect(t, s.URL())
	for _, tp := range []string{"00-zzzz", "00-00000000000000000000000000000000-0000000000000000-01", strings.Repeat("x", 4000)} {
		m := &nats.Msg{Subject: "tel.bad", Header: nats.Header{"traceparent": {tp}}}
		r, err := nc.RequestMsg(m, 10*time.Second) //natssend:reviewed raw request with a malformed header
		if err != nil || string(r.Data) != "ran" {
			t.Fatalf("%q: %v", tp, err)
		}
	}
	spans := k.spans("process tel.bad")
	if len(spans) != 3 {
		t.Fatalf("%d spans", len(spans))
	}
	for _, sp := range spans {
		if sp.Parent().IsValid() || !sp.SpanContext().IsValid() {
			t.Errorf("span with parent %v, context %v: want a new root trace", sp.Parent(), sp.SpanContext())
		}
	}
}

// With the global no-op providers (no SDK set), the publish and request
// paths allocate nothing for telemetry: as many allocations as with
// telemetry turned off.
func TestTelemetryNoopAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector are not the program's")
	}
	s := natstest.Start(t)
	serve(t, s, "tel.noop", shim.Handler(func(ctx context.Context, req *nats.Msg) ([]byte, error) { return nil, nil }))
	nc := connect(t, s.URL())
	ctx := context.Background()
	data := []byte("x")
	// As many as nats.go's own publish (0 on a quiet process; the
	// process-wide count also sees other goroutines).
	raw := testing.AllocsPerRun(200, func() { _ = nc.Publish("tel.noop.pub", data) }) //natssend:reviewed the raw baseline
	pub := testing.AllocsPerRun(200, func() { _ = shim.PublishContext(ctx, nc, "tel.noop.pub", data) })
	if pub > raw {
		t.Errorf("PublishContext: %.1f allocations, nats.go's Publish %.1f", pub, raw)
	}
	on, off := shim.NewClient(nc), shim.NewClient(nc, shim.WithTelemetry(telemetry.WithoutTelemetry()))
	req := func(c *shim.Client) func() {
		return func() {
			if _, err := c.Request(ctx, "tel.noop", nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	a, b := testing.AllocsPerRun(50, req(on)), testing.AllocsPerRun(50, req(off))
	if a > b {
		t.Errorf("Client.Request: %.1f allocations with the no-op globals, %.1f without telemetry", a, b)
	}
}
