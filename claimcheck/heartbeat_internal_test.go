package claimcheck

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// flakyMsgs reports a missed heartbeat before every few messages, as
// nats.go's iterator does (it stays usable afterwards).
type flakyMsgs struct {
	jetstream.MessagesContext
	calls, misses atomic.Int32
}

func (f *flakyMsgs) Next(opts ...jetstream.NextOpt) (jetstream.Msg, error) {
	if f.calls.Add(1)%3 == 1 {
		f.misses.Add(1)
		return nil, jetstream.ErrNoHeartbeat
	}
	return f.MessagesContext.Next(opts...)
}

// TestMissedHeartbeatDoesNotEndRead: a read goes on after the iterator
// reports jetstream.ErrNoHeartbeat (which nats.go's Messages does by
// default, and did for a 100 MiB read under -race) and still delivers
// the exact payload. A missed heartbeat cannot be provoked on demand from
// a healthy server, so it is injected into the real iterator. Then a real
// read with 1 s pull requests whose reader pauses longer than that
// between chunks (pull requests expire mid-read) still completes.
func TestMissedHeartbeatDoesNotEndRead(t *testing.T) {
	_, _, st, ctx := internalStore(t)
	want := make([]byte, 20*(60<<10)+123)
	_, _ = rand.Read(want)
	ref, err := st.Prepare(ctx, &nats.Msg{Subject: "hb", Data: want}, 0)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.parse(ref)
	if err != nil {
		t.Fatal(err)
	}

	for _, window := range []int{openWindow, resolveWindow} {
		r, err := st.open(ctx, "hb", info, window, 0)
		if err != nil {
			t.Fatal(err)
		}
		f := &flakyMsgs{MessagesContext: r.msgs}
		r.msgs = f
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("window %d: read %d bytes, %v after %d missed heartbeats", window, len(got), err, f.misses.Load())
		}
		if f.misses.Load() == 0 {
			t.Fatal("no missed heartbeat injected")
		}
	}

	// Pull requests of 1 s (heartbeat 500 ms) while the reader pauses
	// between chunks for longer than a pull request lives.
	old := readPullExpiry
	readPullExpiry = time.Second
	defer func() { readPullExpiry = old }()
	r, err := st.open(ctx, "hb", info, resolveWindow, resolveWindowBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []byte
	buf := make([]byte, 32<<10)
	for i := 0; ; i++ {
		if i == 2 || i == 5 {
			time.Sleep(1500 * time.Millisecond)
		}
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read with pauses: %v", err)
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read with pauses: %d bytes, want %d", len(got), len(want))
	}
}

// TestChunksGoneDuringReadGiveErrMissing: when an object's chunks
// disappear (TTL, deletion) after a read began, the read fails with
// ErrMissing within a few seconds instead of waiting for its deadline.
func TestChunksGoneDuringReadGiveErrMissing(t *testing.T) {
	_, _, st, ctx := internalStore(t)
	ref, err := st.Prepare(ctx, &nats.Msg{Subject: "gone", Data: make([]byte, 10*(60<<10))}, 0)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.parse(ref)
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.open(ctx, "gone", info, openWindow, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]byte, 1024)
	if _, err := r.Read(buf); err != nil { // the first chunk is here
		t.Fatal(err)
	}
	if err := st.stream.Purge(ctx, jetstream.WithPurgeSubject(chunkSubject(st.cfg.bucket, r.info.NUID))); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = io.ReadAll(r)
	if !errors.Is(err, ErrMissing) {
		t.Fatalf("read after the chunks were purged = %v, want ErrMissing", err)
	}
	if took := time.Since(start); took > 3*readStallCheck {
		t.Fatalf("ErrMissing after %v", took)
	}
	t.Logf("%v after %v", err, time.Since(start))
}
