package claimcheck_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
)

// benchChunk is the chunk size a Store uses on the 64 KiB test server
// (the limit less 512 bytes of headroom); the raw object store runs with
// the same chunk size.
const benchChunk = limit - 512

// BenchmarkPublishResolve compares a claim-check round trip (store the
// payload, build the reference, resolve it back) with the object store's
// own Put + Get of the same bytes and chunk size, in the same run, on a
// memory bucket of an in-process server with max_payload 64 KiB.
func BenchmarkPublishResolve(b *testing.B) {
	srv := startServer(b)
	_, js := connect(b, srv.URL())
	st := newStore(b, js)
	raw, err := js.CreateObjectStore(context.Background(), jetstream.ObjectStoreConfig{Bucket: "raw", Storage: jetstream.MemoryStorage})
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []int{1 << 20, 16 << 20, 64 << 20} {
		data := payload(size, uint64(size))
		name := fmt.Sprintf("%dMiB", size>>20)
		b.Run(name+"/claimcheck", func(b *testing.B) { benchClaimCheck(b, st, data) })
		b.Run(name+"/raw-objectstore", func(b *testing.B) { benchRawObjectStore(b, raw, data, benchChunk) })
	}
}

// benchClaimCheck times one claim-check round trip of data per iteration:
// Prepare (store the payload, build the reference), then Resolve. Deleting
// the payload again is not timed.
func benchClaimCheck(b *testing.B, st *claimcheck.Store, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var prepare, resolve time.Duration
	for b.Loop() {
		t0 := time.Now()
		ref, err := st.Prepare(ctx, &nats.Msg{Subject: "bench", Data: data}, 0)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		got, err := st.Resolve(ctx, ref)
		if err != nil || len(got) != len(data) {
			b.Fatal(err)
		}
		prepare += t1.Sub(t0)
		resolve += time.Since(t1)
		b.StopTimer()
		if err := st.Discard(ctx, ref); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	// Each leg's share of the round trip.
	b.ReportMetric(float64(prepare.Nanoseconds())/float64(b.N), "prepare-ns/op")
	b.ReportMetric(float64(resolve.Nanoseconds())/float64(b.N), "resolve-ns/op")
}

// benchRawObjectStore times the object store's own Put + GetBytes of data
// with chunks of chunk bytes per iteration. Deleting the object again is
// not timed.
func benchRawObjectStore(b *testing.B, raw jetstream.ObjectStore, data []byte, chunk uint32) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for b.Loop() {
		meta := jetstream.ObjectMeta{Name: "obj", Opts: &jetstream.ObjectMetaOptions{ChunkSize: chunk}}
		if _, err := raw.Put(ctx, meta, bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
		got, err := raw.GetBytes(ctx, "obj")
		if err != nil || len(got) != len(data) {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := raw.Delete(ctx, "obj"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkOpenPeakHeap streams a 64 MiB payload through Open into a
// 32 KiB buffer and reports the peak heap growth beyond that buffer, in
// bytes and in chunks, measured two ways. The server runs in a child
// process so that only the client's heap is measured.
//
//   - peak-live: with the GC running almost continuously (GOGC=1), the
//     largest live heap a GC cycle marked. A cycle marks what was
//     reachable when it began plus everything allocated while it runs, so
//     chunks the reader has already dropped count as long as the cycle
//     that saw them lasts: the figure grows when the GC's worker gets
//     little CPU (a loaded machine).
//   - held: in a second pass over the same payload, the heap after a
//     complete forced GC following every Read, that is what the reader
//     really holds between Reads. With one chunk requested at a time
//     (openWindow) nothing else is received while a Read runs, so this is
//     also the peak inside Read, up to the chunk nats.go is receiving in
//     place of the one the reader let go.
//
// peak-heapalloc is HeapAlloc in the first pass, which also counts garbage
// not yet collected.
func BenchmarkOpenPeakHeap(b *testing.B) {
	url := helperServer(b)
	_, js := connect(b, url)
	st := newStore(b, js)
	const size = 64 << 20
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ref, err := st.Prepare(ctx, &nats.Msg{Subject: "heap", Data: payload(size, 99)}, 0)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 32<<10)
	defer debug.SetGCPercent(debug.SetGCPercent(1))
	var peak, peakLive, held uint64
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	// read streams the payload once, calling sample after every Read.
	read := func(sample func()) {
		r, err := st.Open(ctx, ref)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		total := 0
		for {
			n, err := r.Read(buf)
			total += n
			sample()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		if total != size {
			b.Fatalf("read %d bytes", total)
		}
	}
	b.SetBytes(size)
	for b.Loop() {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		metrics.Read(live)
		baseLive := live[0].Value.Uint64()
		read(func() {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > base && ms.HeapAlloc-base > peak {
				peak = ms.HeapAlloc - base
			}
			metrics.Read(live)
			if v := live[0].Value.Uint64(); v > baseLive && v-baseLive > peakLive {
				peakLive = v - baseLive
			}
		})

		b.StopTimer() // the second pass is slow by design
		runtime.GC()
		runtime.ReadMemStats(&ms)
		base = ms.HeapAlloc
		read(func() {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > base && ms.HeapAlloc-base > held {
				held = ms.HeapAlloc - base
			}
		})
		b.StartTimer()
	}
	b.ReportMetric(float64(peakLive), "peak-live-B")
	b.ReportMetric(float64(peakLive)/benchChunk, "peak-live-chunks")
	b.ReportMetric(float64(held), "held-B")
	b.ReportMetric(float64(held)/benchChunk, "held-chunks")
	b.ReportMetric(float64(peak), "peak-heapalloc-B")
}

// helperServer starts a test server in a child process (this test binary
// running TestHelperServerProcess) and returns its URL. The server's
// max_payload is limit unless maxPayload says otherwise.
func helperServer(b *testing.B, maxPayload ...int) string {
	url, _ := helperServerProcess(b, maxPayload...)
	return url
}

// helperServerProcess is helperServer that also returns the child's
// process ID.
func helperServerProcess(b *testing.B, maxPayload ...int) (url string, pid int) {
	mp := limit
	if len(maxPayload) > 0 {
		mp = maxPayload[0]
	}
	var args []string
	if prof := os.Getenv("CLAIMCHECK_HELPER_CPUPROFILE"); prof != "" {
		// Profiling the server: CLAIMCHECK_HELPER_CPUPROFILE=/tmp/srv
		// writes each child's CPU profile to /tmp/srv.<max_payload> when
		// the benchmark ends.
		args = append(args, fmt.Sprintf("-test.cpuprofile=%s.%d", prof, mp))
	}
	c := natstest.StartChild(b, "TestHelperServerProcess", args, []string{fmt.Sprintf("CLAIMCHECK_HELPER_MAX_PAYLOAD=%d", mp)})
	return c.URL, c.Pid
}

// TestHelperServerProcess is the child process of helperServer; it does
// nothing in a normal test run.
func TestHelperServerProcess(t *testing.T) {
	natstest.ServeChild(t, func(t *testing.T) string {
		mp := limit
		if v := os.Getenv("CLAIMCHECK_HELPER_MAX_PAYLOAD"); v != "" {
			if _, err := fmt.Sscan(v, &mp); err != nil {
				t.Fatal(err)
			}
		}
		return natstest.Start(t, natstest.MaxPayload(int32(mp)), natstest.JetStream()).URL()
	})
}
