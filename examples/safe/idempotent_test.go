package orders_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	orders "github.com/natssend/natssend/examples/safe"
	"github.com/natssend/natssend/shim"
)

// TestCreateOnceReplyLost: the first attempt writes the order but its
// reply is lost (it comes only after the attempt's share of the deadline
// has passed); the client sends again under the same operation ID and gets
// the same order back, and exactly one order exists.
func TestCreateOnceReplyLost(t *testing.T) {
	url := startServer(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc, err := orders.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	js, err := jetstream.New(svc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "orders", Storage: jetstream.MemoryStorage})
	if err != nil {
		t.Fatal(err)
	}
	create := orders.CreateInKV(kv)
	var mu sync.Mutex
	var ids []string
	if _, err := orders.Serve(svc, func(ctx context.Context, o orders.Order) (orders.Receipt, error) {
		r, err := create(ctx, o)
		mu.Lock()
		ids = append(ids, shim.OperationIDFrom(ctx))
		first := len(ids) == 1
		mu.Unlock()
		if first {
			// Written; the reply comes only after the caller's attempt has
			// given up on it, so it is lost.
			<-ctx.Done()
			time.Sleep(200 * time.Millisecond)
		}
		return r, err
	}, func(context.Context, string) (orders.Receipt, error) {
		return orders.Receipt{}, shim.Reject("NOT_FOUND", "lookups are not part of this test")
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
	c := shim.NewClient(nc)
	var b [16]byte
	_, _ = rand.Read(b[:])
	opID := hex.EncodeToString(b[:])
	callCtx, callCancel := context.WithTimeout(ctx, 3*time.Second)
	defer callCancel()
	r, err := orders.CreateOnce(callCtx, c, opID, orders.Order{ID: "o-1", Items: []orders.Item{{SKU: "tea", Qty: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(ids) != 2 || ids[0] != opID || ids[1] != opID {
		t.Fatalf("service saw operation IDs %q, want %q twice", ids, opID)
	}
	mu.Unlock()
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for range keys.Keys() {
		n++
	}
	e, err := kv.Get(ctx, opID)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || r.ID != "o-1" || r.Status != "created" || r.Revision != e.Revision() {
		t.Fatalf("%d orders stored; receipt %+v, stored revision %d", n, r, e.Revision())
	}

	// Calling again for the same order (say, after a crash of the client)
	// gives the same answer and still one order.
	r2, err := orders.CreateOnce(ctx, c, opID, orders.Order{ID: "o-1", Items: []orders.Item{{SKU: "tea", Qty: 2}}})
	if err != nil || *r2 != *r {
		t.Fatalf("second call: %+v, %v; want %+v", r2, err, r)
	}
	// The same operation ID for another order is refused.
	if _, err := orders.CreateOnce(ctx, c, opID, orders.Order{ID: "o-2"}); shim.Classify(err) != shim.OutcomeRejected {
		t.Fatalf("operation ID reused for another order: %v", err)
	}
}
