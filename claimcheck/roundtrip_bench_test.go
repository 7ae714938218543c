package claimcheck_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
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
//   - core-transfer: the same bytes sent over Core NATS in chunks of that
//     size from a publisher to a subscriber, which copies them into one
//     buffer;
//   - sha256x2: two SHA-256 passes over the payload, the digest the
//     object-store format needs on write and the verification on read.
//
// The round trip's physical floor is core-transfer plus sha256x2 (their
// ns/op added); make bench-cc prints the claim check's ratio to it.
//
// The server runs in a child process, so B/op counts this process (the
// client) only; B/op divided by the payload size is the bytes allocated
// per payload byte that BENCHMARKS.md reports.
func BenchmarkRoundTrip(b *testing.B) {
	const size = 64 << 20
	data := payload(size, 7)
	for _, mp := range []int{64 << 10, 1 << 20} {
		url, pid := helperServerProcess(b, mp)
		nc, js := connect(b, url)
		// Chunks as large as the limit allows, on every side.
		st := newStore(b, js, claimcheck.WithMaxChunkSize(mp))
		chunk := mp - min(mp/16, 512)
		raw, err := js.CreateObjectStore(context.Background(), jetstream.ObjectStoreConfig{Bucket: "raw", Storage: jetstream.MemoryStorage})
		if err != nil {
			b.Fatal(err)
		}
		name := fmt.Sprintf("maxpayload=%dKiB", mp>>10)
		b.Run(name+"/claimcheck", func(b *testing.B) {
			defer reportCPU(b, pid)()
			benchClaimCheck(b, st, data)
		})
		b.Run(name+"/raw-objectstore", func(b *testing.B) {
			defer reportCPU(b, pid)()
			benchRawObjectStore(b, raw, data, uint32(chunk))
		})
		b.Run(name+"/sha256x2", func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				for range 2 {
					h := sha256.New()
					h.Write(data)
					_ = h.Sum(nil)
				}
			}
		})
		b.Run(name+"/core-transfer", func(b *testing.B) {
			defer reportCPU(b, pid)()
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

// reportCPU starts counting the CPU time of this process (the client)
// and of the server process; the function it returns reports both per
// operation (client-cpu-ms/op, server-cpu-ms/op). Untimed parts of an
// iteration (deleting the object again) count too. With two cores, a
// path cannot take less wall time per operation than half its total CPU
// time.
func reportCPU(b *testing.B, serverPID int) func() {
	c0, okc := processCPU(os.Getpid())
	s0, oks := processCPU(serverPID)
	return func() {
		if b.N == 0 {
			return
		}
		if c1, ok := processCPU(os.Getpid()); ok && okc {
			b.ReportMetric(float64((c1-c0).Microseconds())/1e3/float64(b.N), "client-cpu-ms/op")
		}
		if s1, ok := processCPU(serverPID); ok && oks {
			b.ReportMetric(float64((s1-s0).Microseconds())/1e3/float64(b.N), "server-cpu-ms/op")
		}
	}
}
