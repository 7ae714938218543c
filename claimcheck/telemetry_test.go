package claimcheck_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/telemetry"
)

// kit is a real SDK for one side: spans recorded, metrics read by hand.
type kit struct {
	rec    *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newKit(t testing.TB) *kit {
	k := &kit{rec: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	k.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(k.rec))
	k.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(k.reader))
	t.Cleanup(func() { _ = k.tp.Shutdown(context.Background()); _ = k.mp.Shutdown(context.Background()) })
	return k
}

func (k *kit) opts() []claimcheck.Option {
	return []claimcheck.Option{claimcheck.WithTelemetry(telemetry.WithTracerProvider(k.tp), telemetry.WithMeterProvider(k.mp), telemetry.WithPropagators(propagation.TraceContext{}))}
}

func (k *kit) span(t testing.TB, name string, n int) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	natstest.Eventually(t, 10*time.Second, func() bool {
		found = found[:0]
		for _, s := range k.rec.Ended() {
			if s.Name() == name {
				found = append(found, s)
			}
		}
		return len(found) >= n
	}, name)
	return found[n-1]
}

func (k *kit) sum(t testing.TB, name string) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := k.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if d, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == name {
				for _, p := range d.DataPoints {
					n += p.Value
				}
			}
		}
	}
	return n
}

func spanAttr(s sdktrace.ReadOnlySpan, key string) attribute.Value {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

func childOf(t testing.TB, child, parent sdktrace.ReadOnlySpan, remote bool) {
	t.Helper()
	if child.Parent().SpanID() != parent.SpanContext().SpanID() || child.Parent().IsRemote() != remote {
		t.Fatalf("%q (parent %v remote %v) is not a child of %q (%v)", child.Name(), child.Parent().SpanID(), child.Parent().IsRemote(), parent.Name(), parent.SpanContext().SpanID())
	}
}

// handlerSpan is the span a handler continues from the message's headers
// as Go consumers of NATS extract it: with propagation.HeaderCarrier.
func handlerSpan(h nats.Header) trace.SpanContext {
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(h))
	return trace.SpanContextFromContext(ctx)
}

// subscribedKit is a consumer side with its own SDK: a Store's Subscribe
// on subject, on a connection of its own, whose handler sends what it
// gets; the subscription is in place at return.
func subscribedKit(t *testing.T, s *natstest.Server, subject string) (*kit, <-chan *nats.Msg) {
	t.Helper()
	ck := newKit(t)
	_, cjs := connect(t, s.URL())
	cons := newStore(t, cjs, ck.opts()...)
	got := make(chan *nats.Msg, 2)
	sub, err := cons.Subscribe(subject, func(m *nats.Msg) { got <- m }, func(m *nats.Msg, err error) { t.Error(err) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := cjs.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	return ck, got
}

func TestTelemetryClaimCheckPublishToSubscriber(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	pk := newKit(t)
	_, pjs := connect(t, s.URL())
	prod := newStore(t, pjs, pk.opts()...)
	ck, got := subscribedKit(t, s, "tel.cc")
	ctx, parent := pk.tp.Tracer("test").Start(ctxT(t), "parent")
	const big = 100 << 10 // over the 64 KiB limit
	for _, size := range []int{10, big} {
		m := &nats.Msg{Subject: "tel.cc", Data: payload(size, 1), Header: nats.Header{"Own": {"v"}}}
		if err := prod.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
		if len(m.Header) != 1 {
			t.Fatalf("the caller's header was modified: %v", m.Header)
		}
	}
	parent.End()
	for i, size := range []int{10, big} {
		m := recv(t, got)
		if len(m.Data) != size {
			t.Fatalf("got %d bytes, want %d", len(m.Data), size)
		}
		ps := pk.span(t, "publish tel.cc", i+1)
		if ps.SpanKind() != trace.SpanKindProducer || spanAttr(ps, "natssend.outcome").AsString() != "ok" {
			t.Errorf("publish span kind %v outcome %q", ps.SpanKind(), spanAttr(ps, "natssend.outcome").AsString())
		}
		childOf(t, ps, pk.span(t, "parent", 1), false)
		cs := ck.span(t, "process tel.cc", i+1)
		if cs.SpanKind() != trace.SpanKindConsumer {
			t.Errorf("consumer span kind %v", cs.SpanKind())
		}
		childOf(t, cs, ps, true)
		if hs := handlerSpan(m.Header); hs.SpanID() != cs.SpanContext().SpanID() {
			t.Errorf("the handler's message carries span %v, want the consumer span %v", hs.SpanID(), cs.SpanContext().SpanID())
		}
		if size == big {
			if got := spanAttr(ps, "natssend.claimcheck.size").AsInt64(); got != big {
				t.Errorf("claimcheck.size %d, want %d", got, big)
			}
			childOf(t, pk.span(t, "claimcheck_store tel.cc", 1), ps, false)
			childOf(t, ck.span(t, "claimcheck_resolve tel.cc", 1), cs, false)
		}
	}
	if n := pk.sum(t, "natssend.claimcheck.stored"); n != 1 {
		t.Errorf("claim checks stored %d, want 1", n)
	}
	if n := pk.sum(t, "natssend.claimcheck.stored.size"); n != big {
		t.Errorf("claim check bytes %d, want %d", n, big)
	}
	if n := ck.sum(t, "messaging.client.consumed.messages"); n != 2 {
		t.Errorf("consumed %d, want 2", n)
	}
}

func TestTelemetryJetStreamClaimCheckToConsume(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	pk, ck := newKit(t), newKit(t)
	_, pjs := connect(t, s.URL())
	_, cjs := connect(t, s.URL())
	stream, err := cjs.CreateStream(ctxT(t), jetstream.StreamConfig{Name: "TEL", Subjects: []string{"tel.js"}, Storage: jetstream.MemoryStorage})
	if err != nil {
		t.Fatal(err)
	}
	c, err := stream.CreateOrUpdateConsumer(ctxT(t), jetstream.ConsumerConfig{Durable: "tel", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	prod := newStore(t, pjs, pk.opts()...)
	cons := newStore(t, cjs, ck.opts()...)
	got := make(chan jetstream.Msg, 1)
	cc, err := cons.Consume(c, func(m jetstream.Msg) { _ = m.Ack(); got <- m }, func(m jetstream.Msg, err error) { t.Error(err) })
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()
	ctx, parent := pk.tp.Tracer("test").Start(ctxT(t), "parent")
	const big = 100 << 10
	if _, err := prod.PublishJetStream(ctx, &nats.Msg{Subject: "tel.js", Data: payload(big, 2)}, jetstream.WithMsgID("tel-1")); err != nil {
		t.Fatal(err)
	}
	parent.End()
	var m jetstream.Msg
	select {
	case m = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("nothing consumed")
	}
	if len(m.Data()) != big {
		t.Fatalf("%d bytes", len(m.Data()))
	}
	ps := pk.span(t, "jetstream_publish tel.js", 1)
	if got := spanAttr(ps, "natssend.claimcheck.size").AsInt64(); got != big {
		t.Errorf("claimcheck.size %d", got)
	}
	cs := ck.span(t, "process tel.js", 1)
	childOf(t, cs, ps, true)
	if hs := handlerSpan(m.Headers()); hs.SpanID() != cs.SpanContext().SpanID() {
		t.Errorf("the handler's message carries span %v, want %v", hs.SpanID(), cs.SpanContext().SpanID())
	}
}
