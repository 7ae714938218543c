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

// TestLostRepliesDoNotEndRead: a read goes on after replies of its
// batches are lost (a slow link, a reconnect: here every third chunk
// reply, dropped after it arrived) and still delivers the exact payload,
// asking again from the first missing chunk, with Open's window and with
// Resolve's. Then a reader that pauses between Reads longer than a stall
// check still completes.
func TestLostRepliesDoNotEndRead(t *testing.T) {
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
	old := readStallCheck
	readStallCheck = 300 * time.Millisecond
	defer func() { readStallCheck = old }()

	for _, w := range []struct{ window, wbytes int }{{openWindow, 0}, {openWindow, 256 << 10}, {resolveWindow, resolveWindowBytes}} {
		var seen, lost atomic.Int32
		st.rd.DropReplies(func(m *nats.Msg) bool {
			if m.Header.Get("Status") != "" || seen.Add(1)%3 != 2 {
				return false
			}
			lost.Add(1)
			return true
		})
		r, err := st.open(ctx, "hb", info, w.window, w.wbytes)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		st.rd.DropReplies(nil)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("window %+v: read %d bytes, %v after %d lost replies", w, len(got), err, lost.Load())
		}
		if lost.Load() == 0 {
			t.Fatalf("window %+v: no reply lost", w)
		}
	}

	// A reader that pauses between Reads for longer than a stall check:
	// the replies wait in their batch.
	r, err := st.open(ctx, "hb", info, openWindow, 128<<10)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []byte
	buf := make([]byte, 32<<10)
	for i := 0; ; i++ {
		if i == 2 || i == 5 {
			time.Sleep(2 * readStallCheck) // a slow caller, not an event to wait for
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
