package telemetry

import (
	"context"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/attribute"

	"github.com/natssend/natssend/internal/wire"
)

// Send starts the span of a message natssend sends (k is Producer or
// Client) and returns m, or a copy of m whose header carries ctx's trace
// context (m and its Header are never modified). Call it before any size
// decision: the injected headers count like any other. The span gets the
// message's envelope size (its header block, trace context included, plus
// body: the size compared with max_payload) and its reply subject.
func (t Tel) Send(ctx context.Context, k Kind, name string, m *nats.Msg) (context.Context, Op, *nats.Msg) {
	ctx, op := t.Start(ctx, k, name, m.Subject, len(m.Data))
	if h, ok := t.Inject(ctx, m.Header); ok {
		m = &nats.Msg{Subject: m.Subject, Reply: m.Reply, Header: h, Data: m.Data, Sub: m.Sub}
	}
	if op.Recording() {
		op.span.SetAttributes(msgAttrs(m.Header, len(m.Data), m.Reply, "")...)
	}
	return ctx, op, m
}

// Received is what a receiver knows of a message it handles.
type Received struct {
	Subject  string
	Reply    string // the message's reply subject, "" when none
	Queue    string // the subscription's queue group, "" when none
	Header   nats.Header
	BodySize int
}

// Receive continues the trace context r's header carries (any key case)
// and starts the span of handling r (k is Server or Consumer).
func (t Tel) Receive(ctx context.Context, k Kind, name string, r Received) (context.Context, Op) {
	ctx = t.Extract(ctx, r.Header)
	ctx, op := t.Start(ctx, k, name, r.Subject, r.BodySize)
	if op.Recording() {
		op.span.SetAttributes(msgAttrs(r.Header, r.BodySize, r.Reply, r.Queue)...)
	}
	return ctx, op
}

// msgAttrs are a message's span attributes beyond Start's.
func msgAttrs(h nats.Header, body int, reply, queue string) []attribute.KeyValue {
	kv := []attribute.KeyValue{KeyEnvelopeSize.Int(wire.MsgSize(h, body))}
	if reply != "" {
		kv = append(kv, KeyReplyTo.String(reply))
	}
	if queue != "" {
		kv = append(kv, KeyQueueGroup.String(queue), KeyConsumerGroup.String(queue))
	}
	return kv
}
