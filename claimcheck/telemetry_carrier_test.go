package claimcheck_test

import (
	"testing"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TestTraceSubscribeContinuesHeaderCarrierProducer: the subscription
// helpers continue a trace a plain nats.go producer injected with
// propagation.HeaderCarrier (canonical keys), and hand the handler a
// message whose headers a HeaderCarrier consumer reads.
func TestTraceSubscribeContinuesHeaderCarrierProducer(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	pk := newKit(t)
	pnc, _ := connect(t, s.URL())
	ck, got := subscribedKit(t, s, "hc.sub")
	ctx, producer := pk.tp.Tracer("producer").Start(ctxT(t), "producer", trace.WithSpanKind(trace.SpanKindProducer))
	h := nats.Header{}
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
	producer.End()
	if len(h["Traceparent"]) != 1 {
		t.Fatalf("HeaderCarrier injected %v", h)
	}
	if err := pnc.PublishMsg(&nats.Msg{Subject: "hc.sub", Header: h, Data: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	m := recv(t, got)
	cs := ck.span(t, "process hc.sub", 1)
	childOf(t, cs, pk.span(t, "producer", 1), true)
	if hs := handlerSpan(m.Header); hs.SpanID() != cs.SpanContext().SpanID() {
		t.Errorf("the handler's message carries span %v, want the consumer span %v", hs.SpanID(), cs.SpanContext().SpanID())
	}
	if len(m.Header["Traceparent"]) != 1 || len(m.Header) != 1 {
		t.Errorf("the handler's message header %v, want one Traceparent", m.Header)
	}
}
