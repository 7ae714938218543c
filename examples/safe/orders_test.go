package orders_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	orders "github.com/natssend/natssend/examples/safe"
	"github.com/natssend/natssend/shim"
)

const limit = 64 << 10

// TestServiceEndToEnd runs the safe service against a real server with a
// 64 KiB max_payload and sends orders ten times that size through every
// path that carries them.
func TestServiceEndToEnd(t *testing.T) {
	url := startServer(t, limit)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	svc, err := orders.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	var mu sync.Mutex
	created := map[string]orders.Order{}
	var creates int
	if _, err := orders.Serve(svc,
		func(_ context.Context, o orders.Order) (orders.Receipt, error) {
			mu.Lock()
			defer mu.Unlock()
			creates++
			created[o.ID] = o
			return orders.Receipt{ID: o.ID, Status: "created"}, nil
		},
		func(_ context.Context, id string) (orders.Receipt, error) {
			mu.Lock()
			defer mu.Unlock()
			if _, ok := created[id]; !ok {
				return orders.Receipt{}, shim.Reject("NOT_FOUND", "no order "+id)
			}
			return orders.Receipt{ID: id, Status: "created"}, nil
		}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Flush(); err != nil {
		t.Fatal(err)
	}

	nc, err := orders.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	store, err := claimcheck.New(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	big := orders.Order{ID: "o-1", Items: []orders.Item{{SKU: "book", Qty: 1}}, Invoice: make([]byte, 10*limit)}
	if _, err := rand.Read(big.Invoice); err != nil {
		t.Fatal(err)
	}

	// RPC: small orders are created; an order ten times the limit is
	// refused before sending (requests are capped, not claim-checked).
	c := shim.NewClient(nc, shim.WithTimeout(5*time.Second))
	r, err := orders.Create(ctx, c, orders.Order{ID: "o-small", Items: big.Items})
	if err != nil || r.Status != "created" {
		t.Fatalf("create: %+v, %v", r, err)
	}
	_, err = orders.Create(ctx, c, big)
	if !errors.Is(err, shim.ErrPayloadTooLarge) || shim.Classify(err) != shim.OutcomeNotRun {
		t.Fatalf("an oversized request must be refused unsent, got %v", err)
	}

	// Publish/subscribe: the announcement travels as a claim check.
	got := make(chan orders.Order, 1)
	errs := make(chan error, 4)
	sub, err := orders.Subscribe(store, func(o orders.Order) { got <- o }, func(err error) { errs <- err })
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := orders.PublishCreated(ctx, store, big); err != nil {
		t.Fatalf("publish 10x the limit: %v", err)
	}
	select {
	case o := <-got:
		if o.ID != big.ID || !bytes.Equal(o.Invoice, big.Invoice) {
			t.Fatal("the subscriber got a different order")
		}
	case err := <-errs:
		t.Fatal(err)
	case <-ctx.Done():
		t.Fatal("announcement not delivered")
	}

	// Work queue: enqueue ten times the limit, a worker fulfils it.
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "FULFIL", Subjects: []string{"fulfil.>"}, Retention: jetstream.WorkQueuePolicy,
	}); err != nil {
		t.Fatal(err)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, "FULFIL", jetstream.ConsumerConfig{Durable: "workers", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	fulfilled := make(chan orders.Order, 2)
	cc, err := orders.Work(store, cons, func(o orders.Order) error { fulfilled <- o; return nil }, func(err error) { errs <- err })
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()
	if err := orders.Enqueue(ctx, store, big); err != nil {
		t.Fatalf("enqueue 10x the limit: %v", err)
	}
	// The same order again (a caller retrying after an unknown outcome):
	// de-duplicated by its message ID.
	if err := orders.Enqueue(ctx, store, big); err != nil {
		t.Fatalf("enqueue again: %v", err)
	}
	select {
	case o := <-fulfilled:
		if !bytes.Equal(o.Invoice, big.Invoice) {
			t.Fatal("the worker got a different order")
		}
	case err := <-errs:
		t.Fatal(err)
	case <-ctx.Done():
		t.Fatal("order not fulfilled")
	}
	select {
	case <-fulfilled:
		t.Fatal("the order was fulfilled twice")
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(500 * time.Millisecond):
	}
	mu.Lock()
	defer mu.Unlock()
	if creates != 1 {
		t.Fatalf("create ran %d times, want 1", creates)
	}
}
