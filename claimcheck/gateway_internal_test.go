package claimcheck

import (
	"bytes"
	"context"
	"io"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/internal/natstest"
)

// gatewayRounds is how many reads of each kind TestGatewayReadsDoNotStall
// makes: CLAIMCHECK_GATEWAY_ROUNDS (make gateway-reads sets 20), 4 by
// default.
func gatewayRounds(t *testing.T) int {
	if v := os.Getenv("CLAIMCHECK_GATEWAY_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CLAIMCHECK_GATEWAY_ROUNDS=%q", v)
		}
		return n
	}
	return 4
}

// TestGatewayReadsDoNotStall: a 4 MiB claim check stored in the east
// cluster of a supercluster is resolved (and read with Open) from the
// west cluster, across a gateway with a 20 ms round trip, round after
// round. Every read gets the exact payload, no batch loses a reply (which
// would make the read wait readStallCheck before asking again) and each
// read makes exactly the requests it needs: two for Resolve (the meta
// data, one batch of the 32 chunks), one more per batch for Open. The
// reads' times are logged (make gateway-reads: 20 rounds).
func TestGatewayReadsDoNotStall(t *testing.T) {
	sc := natstest.StartSuperCluster(t, 10*time.Millisecond, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	store := func(url string) *Store {
		nc, err := nats.Connect(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		st, err := New(ctx, js, WithStorage(jetstream.MemoryStorage))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	east := store(sc.East.URL())
	west := store(sc.West.URL())
	want := make([]byte, 4<<20)
	for i := range want {
		want[i] = byte(i * 7)
	}
	ref, err := east.Prepare(ctx, &nats.Msg{Subject: "far", Data: want}, 0)
	if err != nil {
		t.Fatal(err)
	}
	chunks := (len(want) + DefaultMaxChunkSize - 1) / DefaultMaxChunkSize
	openBatches := (chunks + 3) / 4 // DefaultOpenWindow/2 = 4 chunks of 128 KiB
	var resolves, opens []time.Duration
	for round := range gatewayRounds(t) {
		before := west.rd.Stats()
		t0 := time.Now()
		got, err := west.Resolve(ctx, ref)
		resolves = append(resolves, time.Since(t0))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("round %d: Resolve across the gateway: %d bytes, %v", round, len(got), err)
		}
		mid := west.rd.Stats()
		t0 = time.Now()
		r, err := west.Open(ctx, ref)
		if err != nil {
			t.Fatalf("round %d: Open: %v", round, err)
		}
		got, err = io.ReadAll(r)
		r.Close()
		opens = append(opens, time.Since(t0))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("round %d: Open across the gateway: %d bytes, %v", round, len(got), err)
		}
		after := west.rd.Stats()
		if after.Lost != before.Lost {
			t.Fatalf("round %d: %d batches lost replies (each a stall of %v)", round, after.Lost-before.Lost, readStallCheck)
		}
		if n := mid.Requests - before.Requests; n != 2 {
			t.Fatalf("round %d: Resolve made %d requests, want 2", round, n)
		}
		if n := after.Requests - mid.Requests; n != uint64(1+openBatches) {
			t.Fatalf("round %d: Open made %d requests, want %d", round, n, 1+openBatches)
		}
	}
	t.Logf("Resolve of 4 MiB across 20 ms: median %v, slowest %v; Open: median %v, slowest %v",
		median(resolves), slices.Max(resolves), median(opens), slices.Max(opens))
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
