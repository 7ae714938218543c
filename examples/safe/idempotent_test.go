package orders_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	orders "github.com/natssend/natssend/examples/safe"
	"github.com/natssend/natssend/shim"
)

// TestCreateOnceReplyLost: the first attempt writes the order but its
// reply is lost (the service instance dies right after the write); after
// the attempt's wait (shim.DefaultAttemptTimeout) the client sends again
// under the same operation ID, a new instance answers with the same order,
// and exactly one order exists.
func TestCreateOnceReplyLost(t *testing.T) {
	url := startServer(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc, err := orders.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	// The database: its own connection, which outlives the service
	// instances.
	db, err := orders.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	js, err := jetstream.New(db)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "orders", Storage: jetstream.MemoryStorage})
	if err != nil {
		t.Fatal(err)
	}
	create := orders.CreateInKV(kv)
	lookup := func(context.Context, string) (orders.Receipt, error) {
		return orders.Receipt{}, shim.Reject("NOT_FOUND", "lookups are not part of this test")
	}
	var mu sync.Mutex
	var ids []string
	var serve func(nc *nats.Conn) error
	serve = func(nc *nats.Conn) error {
		_, err := orders.Serve(nc, func(ctx context.Context, o orders.Order) (orders.Receipt, error) {
			r, err := create(ctx, o)
			mu.Lock()
			ids = append(ids, shim.OperationIDFrom(ctx))
			first := len(ids) == 1
			mu.Unlock()
			if first {
				// The order is written, then this instance dies before it
				// replies: its reply is lost. A new instance takes over.
				svc2, cerr := orders.Connect(url)
				if cerr != nil {
					t.Error(cerr)
					return r, err
				}
				t.Cleanup(svc2.Close)
				if serr := serve(svc2); serr != nil {
					t.Error(serr)
				}
				_ = svc2.Flush()
				nc.Close()
			}
			return r, err
		}, lookup)
		return err
	}
	if err := serve(svc); err != nil {
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
	callCtx, callCancel := context.WithTimeout(ctx, 15*time.Second)
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
