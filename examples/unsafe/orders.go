// Package orders is an order service written the unsafe way, on purpose:
// it is what natssend-lint is for. Compare with examples/safe.
package orders

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Order is a customer order.
type Order struct {
	ID      string `json:"id"`
	Items   []Item `json:"items"`
	Invoice []byte `json:"invoice,omitempty"` // a rendered PDF: can be large
}

// Item is one order line.
type Item struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

// Receipt confirms a created order.
type Receipt struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// Connect uses nats.go's defaults: an 8 MiB reconnect buffer that can
// deliver a request after its caller gave up.
func Connect(url string) (*nats.Conn, error) {
	return nats.Connect(url, nats.Name("orders"))
}

// PublishCreated announces an order. An order with a large invoice
// exceeds max_payload: refused, or the connection is closed.
func PublishCreated(nc *nats.Conn, o Order) error {
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return nc.Publish("orders.created", data)
}

// Create asks the order service to create an order, and tries again on
// failure: a timeout after the order was created creates it twice.
func Create(ctx context.Context, nc *nats.Conn, o Order) (*Receipt, error) {
	data, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		reply, err := nc.RequestWithContext(ctx, "orders.create", data)
		if err != nil {
			lastErr = err
			time.Sleep(100 * time.Millisecond)
			continue
		}
		var r Receipt
		if err := json.Unmarshal(reply.Data, &r); err != nil {
			return nil, err
		}
		return &r, nil
	}
	return nil, lastErr
}

// Serve answers order creation requests. A reply that is too large is
// never sent, and the caller waits for its timeout.
func Serve(nc *nats.Conn, create func(Order) (Receipt, error)) (*nats.Subscription, error) {
	return nc.Subscribe("orders.create", func(m *nats.Msg) {
		var o Order
		if err := json.Unmarshal(m.Data, &o); err != nil {
			_ = m.Respond([]byte(`{"error":"bad request"}`))
			return
		}
		r, err := create(o)
		if err != nil {
			_ = m.Respond([]byte(`{"error":"` + err.Error() + `"}`))
			return
		}
		data, _ := json.Marshal(r)
		_ = m.Respond(data)
	})
}

// Enqueue puts an order on the fulfilment work queue, retrying on any
// error without a message ID: a lost ack stores the order twice.
func Enqueue(ctx context.Context, js jetstream.JetStream, o Order) error {
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	for {
		_, err := js.Publish(ctx, "fulfil."+o.ID, data)
		if err == nil {
			return nil
		}
		if errors.Is(err, context.Canceled) {
			return err
		}
	}
}

// Work fulfils queued orders.
func Work(ctx context.Context, cons jetstream.Consumer, fulfil func(Order) error) (jetstream.ConsumeContext, error) {
	return cons.Consume(func(msg jetstream.Msg) {
		var o Order
		if err := json.Unmarshal(msg.Data(), &o); err != nil {
			_ = msg.Term()
			return
		}
		if err := fulfil(o); err != nil {
			_ = msg.Nak()
			return
		}
		_ = msg.Ack()
	})
}
