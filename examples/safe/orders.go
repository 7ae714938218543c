// Package orders is the order service of examples/unsafe on natssend: the
// same operations, with exact sizing, claim checks for large messages, one
// send per call, and outcomes reconciled instead of retried blindly; or,
// with CreateOnce and CreateInKV, retried under an operation ID that the
// service makes its write conditional on.
package orders

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/shim"
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
	ID       string `json:"id"`
	Status   string `json:"status"`
	Revision uint64 `json:"revision,omitempty"` // the stored order's revision (CreateInKV)
}

// Connect connects without an outgoing reconnect buffer and with the
// account's max_payload known before the first send.
func Connect(url string) (*nats.Conn, error) {
	return shim.Connect(url, nats.Name("orders"))
}

// PublishCreated announces an order through store, the service's claim
// check store: an order too large for the broker travels as a claim check,
// which the subscribers resolve (see Subscribe; migrate them first). With
// shim.PublishContext instead, such an order would be refused
// (PAYLOAD_TOO_LARGE) and nothing stored.
func PublishCreated(ctx context.Context, store *claimcheck.Store, o Order) error {
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return store.PublishMsg(ctx, &nats.Msg{Subject: "orders.created", Data: data})
}

// Subscribe delivers announced orders, claim checks resolved. Orders that
// cannot be resolved reach onErr.
func Subscribe(store *claimcheck.Store, h func(Order), onErr func(error)) (*nats.Subscription, error) {
	return store.Subscribe("orders.created", func(m *nats.Msg) {
		var o Order
		if err := json.Unmarshal(m.Data, &o); err != nil {
			onErr(err)
			return
		}
		h(o)
	}, func(_ *nats.Msg, err error) { onErr(err) })
}

// ErrReconcile reports a creation whose outcome could not be established.
var ErrReconcile = errors.New("orders: outcome unknown; look the order up before creating it again")

// Create asks the order service to create an order, once. When the outcome
// is unknown (a timeout after sending, say), it asks whether the order
// exists instead of sending it again: the order ID is the idempotency key.
func Create(ctx context.Context, c *shim.Client, o Order) (*Receipt, error) {
	data, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	reply, err := c.Request(ctx, "orders.create", data)
	switch shim.Classify(err) {
	case shim.OutcomeOK:
		var r Receipt
		return &r, json.Unmarshal(reply.Data, &r)
	case shim.OutcomeUnknown:
		r, lerr := Lookup(ctx, c, o.ID)
		if lerr != nil {
			return nil, fmt.Errorf("%w: %w (lookup: %w)", ErrReconcile, err, lerr)
		}
		return r, nil
	default: // not run, or rejected by the service: nothing was created
		return nil, err
	}
}

// Lookup asks for an order's receipt.
func Lookup(ctx context.Context, c *shim.Client, id string) (*Receipt, error) {
	reply, err := c.Request(ctx, "orders.get", []byte(id))
	if err != nil {
		return nil, err
	}
	var r Receipt
	return &r, json.Unmarshal(reply.Data, &r)
}

// Serve answers order creation and lookup requests. Undecodable requests
// get INVALID_ARGUMENT before create runs; create's *shim.Error codes reach
// the caller; a reply too large for the broker becomes a PAYLOAD_TOO_LARGE
// error reply instead of a silent timeout. The handlers are given their
// connection (shim.Conn: a subscription does not expose it), so that their
// replies are checked against that connection's current limit, which the
// error states, and wait for it after a reconnect.
func Serve(nc *nats.Conn, create func(context.Context, Order) (Receipt, error), lookup func(context.Context, string) (Receipt, error)) ([]*nats.Subscription, error) {
	s1, err := nc.Subscribe("orders.create", shim.JSONHandler(create, shim.Conn(nc)))
	if err != nil {
		return nil, err
	}
	s2, err := nc.Subscribe("orders.get", shim.Handler(func(ctx context.Context, m *nats.Msg) ([]byte, error) {
		r, err := lookup(ctx, string(m.Data))
		if err != nil {
			return nil, err
		}
		return json.Marshal(r)
	}, shim.Conn(nc)))
	if err != nil {
		_ = s1.Unsubscribe()
		return nil, err
	}
	return []*nats.Subscription{s1, s2}, nil
}

// Enqueue puts an order on the fulfilment work queue, once. The order ID
// is the JetStream message ID, so a caller that retries after an unknown
// outcome within the stream's duplicate window stores it once. Large
// orders travel as claim checks.
func Enqueue(ctx context.Context, store *claimcheck.Store, o Order) error {
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	_, err = store.PublishJetStream(ctx, &nats.Msg{Subject: "fulfil." + o.ID, Data: data}, jetstream.WithMsgID(o.ID))
	return err
}

// Work fulfils queued orders, claim checks resolved, deleting each payload
// once fulfilled (a work queue has exactly one reader per message).
// Messages that cannot be resolved are never acked: see claimcheck.Consume.
func Work(store *claimcheck.Store, cons jetstream.Consumer, fulfil func(Order) error, onErr func(error)) (jetstream.ConsumeContext, error) {
	return store.Consume(cons, func(msg jetstream.Msg) {
		var o Order
		if err := json.Unmarshal(msg.Data(), &o); err != nil {
			onErr(err)
			_ = msg.Term()
			return
		}
		if err := fulfil(o); err != nil {
			onErr(err)
			_ = msg.Nak()
			return
		}
		_ = msg.Ack()
	}, func(_ jetstream.Msg, err error) { onErr(err) }, claimcheck.DeleteAfterRead())
}
