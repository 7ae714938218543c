package orders_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	orders "github.com/natssend/natssend/examples/safe"
	"github.com/natssend/natssend/shim"
)

// TestExport streams 2,000 orders with 8 KiB invoices (16 MiB, 250 times
// the 64 KiB max_payload) and stops a second export half-way.
func TestExport(t *testing.T) {
	url := startServer(t, limit)
	svc, err := orders.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	stopped := make(chan error, 1)
	if _, err := orders.ServeExport(svc, func(ctx context.Context, yield func(orders.Order) error) error {
		for i := range 2000 {
			if err := yield(orders.Order{ID: fmt.Sprintf("o%d", i), Invoice: make([]byte, 8<<10)}); err != nil {
				stopped <- ctx.Err()
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_ = svc.Flush()
	nc, err := orders.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := shim.NewClient(nc)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	next := 0
	n, err := orders.Export(ctx, c, func(o orders.Order) error {
		if o.ID != fmt.Sprintf("o%d", next) || len(o.Invoice) != 8<<10 {
			return fmt.Errorf("order %d: %s", next, o.ID)
		}
		next++
		return nil
	})
	if err != nil || n != 2000 {
		t.Fatalf("exported %d orders: %v", n, err)
	}
	errStop := errors.New("enough")
	n, err = orders.Export(ctx, c, func(o orders.Order) error {
		if o.ID == "o100" {
			return errStop
		}
		return nil
	})
	if n != 100 || !errors.Is(err, errStop) {
		t.Fatalf("stopped export: %d, %v", n, err)
	}
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the service's context: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the service kept exporting after the caller left")
	}
}
