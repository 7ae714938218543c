package claimcheck_test

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
)

// TestOpenWindowHoldsWhenTheChunkSizeLies: meta data rewritten to declare
// chunks of 8 MiB (as large as the connection could take) for chunks of
// 60,000 bytes. Open with a 256 KiB window, read slowly, holds about its
// window, not the whole 9 MB object, and reads it whole.
func TestOpenWindowHoldsWhenTheChunkSizeLies(t *testing.T) {
	const mp, chunk, window = 8 << 20, 60000, 256 << 10
	s := natstest.Start(t, natstest.MaxPayload(mp), natstest.JetStream())
	_, js := connect(t, s.URL())
	st := newStore(t, js, claimcheck.WithMaxChunkSize(chunk), claimcheck.WithOpenWindow(window))
	want := payload(150*chunk, 41)
	ref, err := st.Prepare(ctxT(t), &nats.Msg{Subject: "lie", Data: want}, 0)
	if err != nil || !claimcheck.IsClaimCheck(ref) {
		t.Fatalf("not claim-checked: %v", err)
	}
	rewriteMeta(t, js, st, ref.Header.Get(claimcheck.HeaderRef), func(info *jetstream.ObjectInfo) {
		info.Opts = &jetstream.ObjectMetaOptions{ChunkSize: mp - 512}
	})
	base := natstest.HeapAfterGC()
	r, err := st.Open(ctxT(t), ref)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got bytes.Buffer
	one := make([]byte, 1)
	for range 200 { // a slow reader
		n, err := r.Read(one)
		if err != nil {
			t.Fatal(err)
		}
		got.Write(one[:n])
		time.Sleep(time.Millisecond)
	}
	if g := natstest.Growth(natstest.HeapAfterGC(), base); g > window+4*chunk+1<<20 {
		t.Errorf("Open held %d bytes for a %d-byte window (a chunk size of %d declared for chunks of %d)", g, window, mp-512, chunk)
	}
	if _, err := io.Copy(&got, r); err != nil || !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("read %d of %d bytes: %v", got.Len(), len(want), err)
	}
}

// TestMoreChunksThanBytesIsCorrupt: meta data declaring more chunks than
// the object has bytes (only empty chunks could make that up, which no
// writer stores) is ErrCorrupt before any chunk is read.
func TestMoreChunksThanBytesIsCorrupt(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	_, js := connect(t, s.URL())
	st := newStore(t, js)
	ref, err := st.Prepare(ctxT(t), &nats.Msg{Subject: "chunks", Data: payload(2*limit, 43)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	rewriteMeta(t, js, st, ref.Header.Get(claimcheck.HeaderRef), func(info *jetstream.ObjectInfo) {
		info.Chunks = uint32(info.Size) + 1
	})
	if _, err := st.Resolve(ctxT(t), ref); !errors.Is(err, claimcheck.ErrCorrupt) {
		t.Fatalf("Resolve: %v, want ErrCorrupt", err)
	}
	if _, err := st.Open(ctxT(t), ref); !errors.Is(err, claimcheck.ErrCorrupt) {
		t.Fatalf("Open: %v, want ErrCorrupt", err)
	}
}

// TestReadOfBucketWithoutDirectGetsFailsAtOnce: a reference naming
// another bucket whose stream does not serve direct gets (allow_direct
// turned off) fails at once with errors.ErrUnsupported, naming the
// bucket, instead of asking again until its deadline.
func TestReadOfBucketWithoutDirectGetsFailsAtOnce(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	_, js := connect(t, s.URL())
	writer := newStore(t, js, claimcheck.WithBucket("nodirect"))
	reader := newStore(t, js)
	ref, err := writer.Prepare(ctxT(t), &nats.Msg{Subject: "nd", Data: payload(2*limit, 47)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctxT(t), "OBJ_nodirect")
	if err != nil {
		t.Fatal(err)
	}
	cfg := stream.CachedInfo().Config
	cfg.AllowDirect = false
	if _, err := js.UpdateStream(ctxT(t), cfg); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	_, err = reader.Resolve(ctxT(t), ref)
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Resolve: %v, want errors.ErrUnsupported", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("refused after %v", d)
	}
}
