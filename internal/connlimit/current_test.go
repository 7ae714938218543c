package connlimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/natstest"
)

// TestCurrent: Current tells the limit without waiting once the link's
// limit is known (lowered by a path cap), and says it does not know on a
// guarded connection before the first confirmation and on a closed one.
func TestCurrent(t *testing.T) {
	const limit = 8 << 10
	s := natstest.Start(t, natstest.MaxPayload(limit))
	nc, _ := dial(t, s.URL(), nil)
	st := connlimit.For(nc)
	if got, ok := st.Current(); ok && got != limit {
		t.Fatalf("before the limit is confirmed: %d, %v", got, ok)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := st.Limit(ctx); err != nil {
		t.Fatal(err)
	}
	if got, ok := st.Current(); !ok || got != limit {
		t.Fatalf("after Limit: %d, %v; want %d", got, ok, limit)
	}
	st.SetPathCap(1000)
	if got, ok := st.Current(); !ok || got != 1000 {
		t.Fatalf("with a path cap: %d, %v; want 1000", got, ok)
	}
	nc.Close()
	if _, ok := st.Current(); ok {
		t.Fatal("a closed connection's limit is known")
	}
	raw, err := nats.Connect(s.URL()) //natssend:reviewed a connection not made by shim.Connect, on purpose: the unguarded path
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rst := connlimit.For(raw)
	if _, ok := rst.Current(); ok {
		t.Fatal("an unguarded connection's limit is known before a round trip")
	}
	if _, err := rst.Limit(ctx); err != nil {
		t.Fatal(err)
	}
	if got, ok := rst.Current(); !ok || got != limit {
		t.Fatalf("unguarded, after Limit: %d, %v", got, ok)
	}
}
