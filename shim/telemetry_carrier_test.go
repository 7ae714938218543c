package shim_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
	"github.com/natssend/natssend/telemetry"
)

// headerCarrierConsumer subscribes a plain nats.go subscriber on subject
// that extracts the trace context the way Go services on NATS do
// (propagation.HeaderCarrier on msg.Header, the global propagator) and
// sends what it extracted; with answer, it answers requests with "ok".
func headerCarrierConsumer(t *testing.T, s *natstest.Server, subject string, answer bool) <-chan trace.SpanContext {
	t.Helper()
	got := make(chan trace.SpanContext, 16)
	serve(t, s, subject, func(m *nats.Msg) {
		ctx := otel.GetTextMapPropagator().Extract(context.Background(), propagation.HeaderCarrier(m.Header))
		got <- trace.SpanContextFromContext(ctx)
		if answer && m.Reply != "" {
			_ = m.Respond([]byte("ok"))
		}
	})
	return got
}

// continues checks that the consumer's extracted context is span sp's.
func continues(t *testing.T, got <-chan trace.SpanContext, sp sdktrace.ReadOnlySpan) {
	t.Helper()
	var sc trace.SpanContext
	select {
	case sc = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the consumer got nothing")
	}
	if !sc.IsValid() || !sc.IsRemote() {
		t.Fatalf("a HeaderCarrier consumer extracted no trace context (%v) from %q's message", sc, sp.Name())
	}
	if sc.TraceID() != sp.SpanContext().TraceID() || sc.SpanID() != sp.SpanContext().SpanID() {
		t.Fatalf("a HeaderCarrier consumer continues span %v of trace %v, want %q (%v of %v)",
			sc.SpanID(), sc.TraceID(), sp.Name(), sp.SpanContext().SpanID(), sp.SpanContext().TraceID())
	}
}

// jsStore is a claim check Store on nc using the globals.
func jsStore(t *testing.T, nc *nats.Conn) *claimcheck.Store {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := claimcheck.New(context.Background(), js, claimcheck.WithStorage(jetstream.MemoryStorage))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestTraceHeaderCarrierConsumerContinues: a consumer extracting with
// propagation.HeaderCarrier(msg.Header) continues the trace natssend
// started, for a publish, a request, a claim-checked request, a
// claim-checked publish and a stream's request.
func TestTraceHeaderCarrierConsumerContinues(t *testing.T) {
	k := useGlobalKit(t)
	const limit = 32 << 10
	s := natstest.Start(t, natstest.MaxPayload(limit), natstest.JetStream())
	ctx, parent := k.tp.Tracer("test").Start(context.Background(), "parent")
	defer parent.End()

	t.Run("publish", func(t *testing.T) {
		got := headerCarrierConsumer(t, s, "hc.pub", true)
		if err := shim.PublishMsgContext(ctx, connect(t, s.URL()), &nats.Msg{Subject: "hc.pub", Data: []byte("x")}); err != nil {
			t.Fatal(err)
		}
		continues(t, got, k.span(t, "publish hc.pub"))
	})
	t.Run("request", func(t *testing.T) {
		got := headerCarrierConsumer(t, s, "hc.req", true)
		if _, err := shim.NewClient(connect(t, s.URL())).Request(ctx, "hc.req", []byte("x")); err != nil {
			t.Fatal(err)
		}
		continues(t, got, k.span(t, "request hc.req"))
	})
	t.Run("claim-checked request", func(t *testing.T) {
		got := headerCarrierConsumer(t, s, "hc.ccreq", true)
		nc := connect(t, s.URL())
		c := shim.NewClient(nc, shim.WithClaimChecks(jsStore(t, nc)), shim.WithTimeout(30*time.Second))
		if _, err := c.Request(ctx, "hc.ccreq", make([]byte, 2*limit)); err != nil {
			t.Fatal(err)
		}
		rs := k.span(t, "request hc.ccreq")
		if attr(rs, "natssend.claimcheck.size").AsInt64() != 2*limit {
			t.Fatal("the request was not claim-checked")
		}
		continues(t, got, rs)
	})
	t.Run("claim-checked publish", func(t *testing.T) {
		got := headerCarrierConsumer(t, s, "hc.ccpub", true)
		if err := jsStore(t, connect(t, s.URL())).PublishMsg(ctx, &nats.Msg{Subject: "hc.ccpub", Data: make([]byte, 2*limit)}); err != nil {
			t.Fatal(err)
		}
		ps := k.span(t, "publish hc.ccpub")
		if attr(ps, "natssend.claimcheck.size").AsInt64() != 2*limit {
			t.Fatal("the message was not claim-checked")
		}
		continues(t, got, ps)
	})
	t.Run("stream", func(t *testing.T) {
		// The consumer beside the StreamHandler gets the same request (and
		// leaves the answer to the StreamHandler).
		got := headerCarrierConsumer(t, s, "hc.stream", false)
		serveStream(t, s.URL(), "hc.stream", writeAll([]byte("streamed"), 3))
		rs, err := shim.NewClient(connect(t, s.URL())).RequestStream(ctx, "hc.stream", nil)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := readAll(t, rs); err != nil || string(b) != "streamed" {
			t.Fatalf("stream read %q, %v", b, err)
		}
		continues(t, got, k.span(t, "request_stream hc.stream"))
	})
}

// TestTraceHandlersContinueHeaderCarrierProducer: natssend's handlers
// continue a trace a producer injected with propagation.HeaderCarrier
// (canonical keys: Traceparent).
func TestTraceHandlersContinueHeaderCarrierProducer(t *testing.T) {
	k := useGlobalKit(t)
	s := natstest.Start(t)
	ctx, producer := k.tp.Tracer("producer").Start(context.Background(), "producer", trace.WithSpanKind(trace.SpanKindProducer))
	producer.End()
	header := func() nats.Header {
		h := nats.Header{}
		otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(h))
		if len(h["Traceparent"]) != 1 {
			t.Fatalf("HeaderCarrier injected %v", h)
		}
		return h
	}
	wantParent := func(name string) {
		t.Helper()
		hs := k.span(t, name)
		if hs.Parent().SpanID() != producer.SpanContext().SpanID() || hs.SpanContext().TraceID() != producer.SpanContext().TraceID() || !hs.Parent().IsRemote() {
			t.Fatalf("span %q has parent %v (trace %v), want the producer's %v", name, hs.Parent().SpanID(), hs.SpanContext().TraceID(), producer.SpanContext().SpanID())
		}
	}

	serve(t, s, "hcp.req", shim.Handler(func(ctx context.Context, req *nats.Msg) ([]byte, error) { return []byte("ok"), nil }))
	if _, err := connect(t, s.URL()).RequestMsg(&nats.Msg{Subject: "hcp.req", Header: header()}, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	wantParent("process hcp.req")

	serveStream(t, s.URL(), "hcp.stream", writeAll([]byte("abc"), 1))
	c := shim.NewClient(connect(t, s.URL()), shim.WithTelemetry(telemetry.WithoutTelemetry())) // the header as the caller made it
	rs, err := c.RequestMsgStream(context.Background(), &nats.Msg{Subject: "hcp.stream", Header: header()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readAll(t, rs); err != nil {
		t.Fatal(err)
	}
	wantParent("process hcp.stream")
}
