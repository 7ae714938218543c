package claimcheck_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
)

// BenchmarkRoundTrip measures a 64 MiB claim-check round trip (Prepare,
// which stores the payload and builds the reference, then Resolve) at the
// test server's 64 KiB max_payload and at nats-server's default 1 MiB,
// with, in the same run and against the same server:
//
//   - raw-objectstore: the object store's own Put + GetBytes of the same
//     bytes with the same chunk size;
//   - core-transfer: the physical floor, the same bytes sent over Core
//     NATS in chunks of that size from a publisher to a subscriber, which
//     copies them into one buffer.
//
// The server runs in a child process, so B/op counts this process (the
// client) only; B/op divided by the payload size is the bytes allocated
// per payload byte that BENCHMARKS.md reports.
func BenchmarkRoundTrip(b *testing.B) {
	const size = 64 << 20
	data := payload(size, 7)
	for _, mp := range []int{64 << 10, 1 << 20} {
		url := helperServer(b, mp)
		nc, js := connect(b, url)
		// Chunks as large as the limit allows, on every side.
		st := newStore(b, js, claimcheck.WithMaxChunkSize(mp))
		chunk := mp - min(mp/16, 512)
		raw, err := js.CreateObjectStore(context.Background(), jetstream.ObjectStoreConfig{Bucket: "raw", Storage: jetstream.MemoryStorage})
		if err != nil {
			b.Fatal(err)
		}
		name := fmt.Sprintf("maxpayload=%dKiB", mp>>10)
		b.Run(name+"/claimcheck", func(b *testing.B) { benchClaimCheck(b, st, data) })
		b.Run(name+"/raw-objectstore", func(b *testing.B) { benchRawObjectStore(b, raw, data, uint32(chunk)) })
		b.Run(name+"/core-transfer", func(b *testing.B) {
			sub, _ := connect(b, url)
			b.SetBytes(size)
			b.ReportAllocs()
			buf := make([]byte, 0, size)
			var got atomic.Int64
			done := make(chan struct{}, 1)
			s, err := sub.Subscribe("transfer", func(m *nats.Msg) {
				buf = append(buf, m.Data...)
				if got.Add(int64(len(m.Data))) == size {
					done <- struct{}{}
				}
			})
			if err != nil {
				b.Fatal(err)
			}
			_ = s.SetPendingLimits(-1, -1)
			if err := sub.Flush(); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				buf = buf[:0]
				got.Store(0)
				for off := 0; off < size; off += chunk {
					if err := nc.Publish("transfer", data[off:min(off+chunk, size)]); err != nil { //natssend:reviewed the benchmark's physical floor
						b.Fatal(err)
					}
				}
				if err := nc.Flush(); err != nil {
					b.Fatal(err)
				}
				select {
				case <-done:
				case <-time.After(time.Minute):
					b.Fatalf("received %d of %d bytes", got.Load(), size)
				}
			}
		})
	}
}
