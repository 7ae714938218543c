package claimcheck_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
)

// BenchmarkConcurrentResolve: resolves per second of one claim check of
// 65 KiB (two chunks at the 64 KiB max_payload of the child-process
// server) in a file-storage bucket (the Store's default) by 1, 200 and
// 2,000 readers at once on one connection, against nats.go's
// ObjectStore.GetBytes of the same bytes, same chunk size and storage, on
// the same server in the same run. One operation is every reader reading
// the object once; resolves/s counts successful reads, failed/op the
// others (GetBytes creates a consumer per read: past the stream's 1,000
// consumers it fails).
func BenchmarkConcurrentResolve(b *testing.B) {
	f := newFanOutBench(b)
	for _, readers := range []int{1, 200, 2000} {
		b.Run(fmt.Sprintf("readers=%d/claimcheck", readers), func(b *testing.B) {
			defer reportCPU(b, f.pid)()
			fanOut(b, readers, f.resolve, f.data)
		})
		b.Run(fmt.Sprintf("readers=%d/objectstore-getbytes", readers), func(b *testing.B) {
			defer reportCPU(b, f.pid)()
			fanOut(b, readers, f.getBytes, f.data)
		})
	}
}

// BenchmarkConcurrentResolvePaired is BenchmarkConcurrentResolve's 200
// readers with three legs in every iteration, in turn (the order
// rotates), so that each ratio compares rounds that met the same load on
// a shared machine: 200 concurrent Resolves of one claim check on one
// Store (they share one read: see the package doc), 200 concurrent
// Resolves of 200 different claim checks of the same size on the same
// Store (nothing to share: each makes its own read, as readers in
// separate processes do, or workers of a queue), and 200 concurrent
// GetBytes of one object. Reported: cc/getbytes and distinct/getbytes,
// the medians over the iterations of each claim-check leg's throughput
// over GetBytes' in the same iteration (the target is at least 3);
// cc-resolves/s, distinct-resolves/s and getbytes-resolves/s, the medians
// of each leg; the CPU time of one round in both processes (client and
// server: totals over the iterations, per round, at the 10 ms resolution
// of /proc) of each leg, and getbytes/distinct-cpu, which the machine's
// other load does not skew.
func BenchmarkConcurrentResolvePaired(b *testing.B) {
	const readers = 200
	f := newFanOutBench(b)
	f.distinctRefs(b, readers)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const legs = 3
	names := [legs]string{"cc", "distinct", "getbytes"}
	read := [legs]func(context.Context) ([]byte, error){f.resolve, f.resolveDistinct, f.getBytes}
	var rates, ratios [legs][]float64
	var cpu [legs]time.Duration
	i := 0
	for b.Loop() {
		var rate [legs]float64
		for k := range legs {
			leg := (i + k) % legs
			c0 := f.cpu()
			t0 := time.Now()
			ok, failed, err := fanOutRound(ctx, readers, read[leg], f.data)
			d := time.Since(t0)
			cpu[leg] += f.cpu() - c0
			if failed > 0 {
				b.Fatalf("leg %s: %d of %d reads failed: %v", names[leg], failed, readers, err)
			}
			rate[leg] = float64(ok) / d.Seconds()
			rates[leg] = append(rates[leg], rate[leg])
		}
		for leg := range legs {
			ratios[leg] = append(ratios[leg], rate[leg]/rate[legs-1])
		}
		i++
	}
	for leg, name := range names {
		if leg < legs-1 {
			b.ReportMetric(median(ratios[leg]), name+"/getbytes")
		}
		b.ReportMetric(median(rates[leg]), name+"-resolves/s")
		b.ReportMetric(float64(cpu[leg].Microseconds())/1e3/float64(b.N), name+"-cpu-ms")
	}
	if cpu[1] > 0 {
		b.ReportMetric(float64(cpu[2])/float64(cpu[1]), "getbytes/distinct-cpu")
	}
}

// fanOutBench is the set-up of the concurrent-reader benchmarks: a 65
// KiB claim check (two chunks at the 64 KiB max_payload of the
// child-process server) in a file-storage bucket, the Store's default,
// and the same bytes stored with nats.go's object store, same chunk
// size and storage.
type fanOutBench struct {
	data []byte
	ref  *nats.Msg
	st   *claimcheck.Store
	raw  jetstream.ObjectStore
	pid  int // the server's

	refs []*nats.Msg  // distinctRefs': claim checks of other objects of the same bytes
	next atomic.Int64 // the next of refs to read
}

func newFanOutBench(b *testing.B) *fanOutBench {
	const size = limit + 1000
	f := &fanOutBench{data: payload(size, 31)}
	url, pid := helperServerProcess(b)
	f.pid = pid
	nc, js := connect(b, url)
	f.st = newStore(b, js, claimcheck.WithStorage(jetstream.FileStorage))
	ch := make(chan *nats.Msg, 1)
	if _, err := nc.ChanSubscribe("fanbench", ch); err != nil {
		b.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.st.PublishMsg(context.Background(), &nats.Msg{Subject: "fanbench", Data: f.data}); err != nil {
		b.Fatal(err)
	}
	select {
	case f.ref = <-ch:
	case <-time.After(10 * time.Second):
		b.Fatal("no reference")
	}
	raw, err := js.CreateObjectStore(context.Background(), jetstream.ObjectStoreConfig{Bucket: "rawfan", Storage: jetstream.FileStorage})
	if err != nil {
		b.Fatal(err)
	}
	f.raw = raw
	chunk := uint32(limit - min(limit/16, 512))
	if _, err := raw.Put(context.Background(), jetstream.ObjectMeta{Name: "obj", Opts: &jetstream.ObjectMetaOptions{ChunkSize: chunk}}, bytes.NewReader(f.data)); err != nil {
		b.Fatal(err)
	}
	return f
}

func (f *fanOutBench) resolve(ctx context.Context) ([]byte, error) { return f.st.Resolve(ctx, f.ref) }

// distinctRefs stores f's payload n more times with f's Store, each a
// claim check of its own: resolveDistinct reads each in turn.
func (f *fanOutBench) distinctRefs(b *testing.B, n int) {
	for range n {
		ref, err := f.st.Prepare(context.Background(), &nats.Msg{Subject: "fanbench", Data: f.data}, 0)
		if err != nil {
			b.Fatal(err)
		}
		f.refs = append(f.refs, ref)
	}
}

// resolveDistinct resolves the next of f's distinct claim checks: the
// readers of a round read different objects and share nothing.
func (f *fanOutBench) resolveDistinct(ctx context.Context) ([]byte, error) {
	return f.st.Resolve(ctx, f.refs[int(f.next.Add(1))%len(f.refs)])
}

func (f *fanOutBench) getBytes(ctx context.Context) ([]byte, error) {
	return f.raw.GetBytes(ctx, "obj")
}

// cpu returns the CPU time used so far by this process and the server's.
func (f *fanOutBench) cpu() time.Duration { return cpuBoth(f.pid) }

// fanOut runs readers concurrent reads per operation and reports
// resolves/s and failed/op.
func fanOut(b *testing.B, readers int, read func(context.Context) ([]byte, error), want []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var okN, failed int64
	var firstErr error
	t0 := time.Now()
	for b.Loop() {
		ok, bad, err := fanOutRound(ctx, readers, read, want)
		okN, failed = okN+ok, failed+bad
		if firstErr == nil {
			firstErr = err
		}
	}
	b.ReportMetric(float64(okN)/time.Since(t0).Seconds(), "resolves/s")
	b.ReportMetric(float64(failed)/float64(b.N), "failed/op")
	if firstErr != nil {
		b.Logf("first failure: %v", firstErr)
	}
}

// fanOutRound has readers goroutines read once each, at once, and
// returns how many read want, how many did not, and the first error.
func fanOutRound(ctx context.Context, readers int, read func(context.Context) ([]byte, error), want []byte) (ok, failed int64, firstErr error) {
	var okN, bad atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, rcancel := context.WithTimeout(ctx, 30*time.Second)
			defer rcancel()
			got, err := read(rctx)
			if err == nil && bytes.Equal(got, want) {
				okN.Add(1)
				return
			}
			bad.Add(1)
			if err == nil {
				err = fmt.Errorf("read %d bytes, not the payload", len(got))
			}
			first.CompareAndSwap(nil, err)
		}()
	}
	wg.Wait()
	if e, _ := first.Load().(error); e != nil {
		firstErr = e
	}
	return okN.Load(), bad.Load(), firstErr
}
