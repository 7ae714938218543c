package shim_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// BenchmarkOverflowRoundTrip sends a request of size bytes and gets a
// reply of size bytes through a Client with WithClaimChecks and a Handler
// with ServeClaimChecks (64 KiB max_payload, memory-backed bucket), against
// the raw object store moving the same bytes: Put + GetBytes of the
// request, then Put + GetBytes of the reply, with the same chunk size. Both
// count 2×size bytes per operation.
func BenchmarkOverflowRoundTrip(b *testing.B) {
	e := newOverflowEnv(b)
	reply := payload(64<<20, 3)
	var n int
	e.serveHandler(b, shim.Handler(func(_ context.Context, m *nats.Msg) ([]byte, error) {
		return reply[:len(m.Data)], nil
	}, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc)))
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst), shim.WithTimeout(5*time.Minute))
	js, err := jetstream.New(e.nc)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := js.CreateObjectStore(context.Background(), jetstream.ObjectStoreConfig{Bucket: "raw", Storage: jetstream.MemoryStorage})
	if err != nil {
		b.Fatal(err)
	}
	const chunk = overflowLimit - 512 // the Store's chunk size at 64 KiB
	for _, size := range []int{1 << 20, 16 << 20, 64 << 20} {
		req := payload(size, 4)
		name := fmt.Sprintf("%dMiB", size>>20)
		b.Run(name+"/client", func(b *testing.B) {
			b.SetBytes(2 * int64(size))
			b.ReportAllocs()
			for b.Loop() {
				got, err := c.Request(context.Background(), "svc", req)
				if err != nil || len(got.Data) != size {
					b.Fatal(err)
				}
				n++
			}
		})
		b.Run(name+"/raw-objectstore", func(b *testing.B) {
			b.SetBytes(2 * int64(size))
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				for i, data := range [][]byte{req, reply[:size]} {
					obj := fmt.Sprintf("obj%d", i)
					meta := jetstream.ObjectMeta{Name: obj, Opts: &jetstream.ObjectMetaOptions{ChunkSize: chunk}}
					if _, err := raw.Put(ctx, meta, bytes.NewReader(data)); err != nil {
						b.Fatal(err)
					}
					got, err := raw.GetBytes(ctx, obj)
					if err != nil || len(got) != size {
						b.Fatal(err)
					}
					if err := raw.Delete(ctx, obj); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
	sink += n
}

// BenchmarkRequestClaimChecks compares small calls (128 B request and a
// 2-byte reply) through a Client with and without WithClaimChecks, on the
// same connection and responder. The server and the responder (raw
// nats.go, which answers every request the same way) run in a child
// process (TestChildSmallResponder), so allocs/op and B/op count the
// Client's process only.
//
// "in-process" repeats the comparison with the server and the responder
// in this process, as earlier runs measured it: there the responder's
// nats.go decoding of the one more header line (HeaderAcceptClaimCheck)
// shows up too, and the control "without+same-header" (a Client without
// claim checks sending the same header line) shows that it is the header
// line's cost, not the Client's.
func BenchmarkRequestClaimChecks(b *testing.B) {
	nc := connect(b, natstest.StartChild(b, "TestChildSmallResponder", nil, nil).URL)
	benchSmallCalls(b, "child", nc, newStore(b, nc))
	e := newOverflowEnv(b)
	e.serveHandler(b, func(m *nats.Msg) { _ = m.Respond([]byte("ok")) }) //natssend:reviewed benchmark responder: the same for every client
	benchSmallCalls(b, "in-process", e.nc, e.cst)
}

func benchSmallCalls(b *testing.B, where string, nc *nats.Conn, st *claimcheck.Store) {
	data := make([]byte, 128)
	for _, tc := range []struct {
		name string
		c    *shim.Client
	}{
		{"without", shim.NewClient(nc)},
		{"with", shim.NewClient(nc, shim.WithClaimChecks(st))},
		{"without+same-header", shim.NewClient(nc, shim.WithHeader(shim.HeaderAcceptClaimCheck, st.Bucket()))},
	} {
		b.Run(where+"/"+tc.name, func(b *testing.B) {
			b.SetBytes(128)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tc.c.Request(context.Background(), "svc", data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
