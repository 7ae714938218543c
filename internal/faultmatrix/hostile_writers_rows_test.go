package faultmatrix_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// writersRow is a row of a StreamWriter shared by many goroutines.
type writersRow struct {
	name    string
	flush   bool // every third writer flushes after each write
	outlive bool // more writers keep writing after the handler returned
	closeAt int  // the caller closes the stream after this many bytes (0: reads to the end)
}

func (row writersRow) subtest() (string, func(*testing.T)) { return row.name, row.run }

const (
	writers     = 16
	writesEach  = 40
	writeSize   = 700
	writersWind = 8 << 10
)

func (row writersRow) run(t *testing.T) {
	s := natstest.Start(t, natstest.MaxPayload(4096))
	resp, caller := dial(t, s.URL()), dial(t, s.URL())
	var (
		bad      atomic.Value // a writer's error that the row does not allow
		late     sync.WaitGroup
		failures atomic.Int64
	)
	writeAll := func(w *shim.StreamWriter, g int, allowed func(error) bool) {
		p := bytes.Repeat([]byte{byte(g)}, writeSize)
		for range writesEach {
			_, err := w.Write(p)
			if err == nil && row.flush && g%3 == 0 {
				err = w.Flush()
			}
			if err != nil {
				failures.Add(1)
				if !allowed(err) {
					bad.Store(err)
				}
				return
			}
		}
	}
	canceled := func(err error) bool { return row.closeAt > 0 && shim.Classify(err) == shim.OutcomeUnknown }
	handled := make(chan struct{})
	mh := shim.StreamHandler(func(ctx context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		var wg sync.WaitGroup
		for g := range writers {
			wg.Go(func() { writeAll(w, g, canceled) })
		}
		wg.Wait()
		if row.outlive {
			for g := range writers {
				late.Go(func() {
					p := bytes.Repeat([]byte{byte(writers + g)}, writeSize)
					for {
						if _, err := w.Write(p); err != nil {
							if !errors.Is(err, shim.ErrStreamClosed) && !canceled(err) {
								bad.Store(err)
							}
							return
						}
					}
				})
			}
		}
		return nil
	}, shim.Conn(resp))
	if _, err := resp.Subscribe(subject, func(m *nats.Msg) { mh(m); close(handled) }); err != nil {
		t.Fatal(err)
	}
	if err := resp.Flush(); err != nil {
		t.Fatal(err)
	}
	base := takeBaseline(s, caller, resp)
	rs, err := shim.NewClient(caller).RequestStream(context.Background(), subject, nil, shim.StreamWindow(writersWind))
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	if row.closeAt > 0 {
		got = make([]byte, row.closeAt)
		_, err = io.ReadFull(rs, got)
		_ = rs.Close()
	} else {
		got, err = io.ReadAll(rs)
		_ = rs.Close()
	}
	if err != nil {
		t.Fatalf("after %d bytes: %v", len(got), err)
	}
	base.checkHeap(t, writersWind)
	select {
	case <-handled:
	case <-time.After(settle):
		t.Fatal("the handler's adapter did not return")
	}
	late.Wait()
	if v := bad.Load(); v != nil {
		t.Fatalf("a writer failed with %v", v)
	}
	var count [2 * writers]int
	for _, b := range got {
		count[b]++
	}
	for g := range writers {
		if want := writesEach * writeSize; row.closeAt == 0 && count[g] != want {
			t.Errorf("writer %d: %d bytes arrived, want %d", g, count[g], want)
		}
	}
	if row.closeAt > 0 && failures.Load() == 0 {
		t.Error("no writer saw the stream closed")
	}
	base.checkBack(t)
}

// TestStreamConcurrentWriters: one StreamWriter, sixteen goroutines, a
// window small enough that they wait for credit together. Not parallel:
// the rows measure the heap.
func TestStreamConcurrentWriters(t *testing.T) {
	runRowsAtOnce(t, 1, []writersRow{
		{name: "writers wait for credit together: every byte once"},
		{name: "writers flush as they go", flush: true},
		{name: "writers outlive the handler: ErrStreamClosed", outlive: true},
		{name: "the caller closes while they write", closeAt: 3 * writersWind, flush: true},
	})
}
