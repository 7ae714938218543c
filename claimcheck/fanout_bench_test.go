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
	const size = limit + 1000
	data := payload(size, 31)
	url, pid := helperServerProcess(b)
	nc, js := connect(b, url)
	st := newStore(b, js, claimcheck.WithStorage(jetstream.FileStorage))
	ch := make(chan *nats.Msg, 1)
	if _, err := nc.ChanSubscribe("fanbench", ch); err != nil {
		b.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := st.PublishMsg(context.Background(), &nats.Msg{Subject: "fanbench", Data: data}); err != nil {
		b.Fatal(err)
	}
	var ref *nats.Msg
	select {
	case ref = <-ch:
	case <-time.After(10 * time.Second):
		b.Fatal("no reference")
	}
	raw, err := js.CreateObjectStore(context.Background(), jetstream.ObjectStoreConfig{Bucket: "rawfan", Storage: jetstream.FileStorage})
	if err != nil {
		b.Fatal(err)
	}
	chunk := uint32(limit - min(limit/16, 512))
	if _, err := raw.Put(context.Background(), jetstream.ObjectMeta{Name: "obj", Opts: &jetstream.ObjectMetaOptions{ChunkSize: chunk}}, bytes.NewReader(data)); err != nil {
		b.Fatal(err)
	}
	for _, readers := range []int{1, 200, 2000} {
		b.Run(fmt.Sprintf("readers=%d/claimcheck", readers), func(b *testing.B) {
			defer reportCPU(b, pid)()
			fanOut(b, readers, func(ctx context.Context) ([]byte, error) { return st.Resolve(ctx, ref) }, data)
		})
		b.Run(fmt.Sprintf("readers=%d/objectstore-getbytes", readers), func(b *testing.B) {
			defer reportCPU(b, pid)()
			fanOut(b, readers, func(ctx context.Context) ([]byte, error) { return raw.GetBytes(ctx, "obj") }, data)
		})
	}
}

// fanOut runs readers concurrent reads per operation and reports
// resolves/s and failed/op.
func fanOut(b *testing.B, readers int, read func(context.Context) ([]byte, error), want []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var okN, failed atomic.Int64
	var firstErr atomic.Value
	t0 := time.Now()
	for b.Loop() {
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
				failed.Add(1)
				if err != nil {
					firstErr.CompareAndSwap(nil, err.Error())
				}
			}()
		}
		wg.Wait()
	}
	b.ReportMetric(float64(okN.Load())/time.Since(t0).Seconds(), "resolves/s")
	b.ReportMetric(float64(failed.Load())/float64(b.N), "failed/op")
	if e := firstErr.Load(); e != nil {
		b.Logf("first failure: %s", e)
	}
}
