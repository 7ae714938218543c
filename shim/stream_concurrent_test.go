package shim_test

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

// A StreamWriter used from many goroutines at once, with a window small
// enough that writers wait for credit, never panics and loses or repeats
// no byte; writers that outlive the handler get ErrStreamClosed.
func TestStreamWriterConcurrent(t *testing.T) {
	s := natstest.Start(t, natstest.MaxPayload(4096))
	const writers, writes, size = 16, 50, 700
	var outlived atomic.Int64
	var badErr atomic.Value
	serveStream(t, s.URL(), "conc", func(ctx context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		var wg sync.WaitGroup
		for g := range writers {
			wg.Go(func() {
				p := bytes.Repeat([]byte{byte(g)}, size)
				for range writes {
					if _, err := w.Write(p); err != nil {
						badErr.Store(err)
						return
					}
					if g%3 == 0 {
						if err := w.Flush(); err != nil {
							badErr.Store(err)
							return
						}
					}
				}
			})
		}
		wg.Wait()
		// Writers that outlive the handler: they keep writing after it
		// returned, until Write fails.
		for g := range writers {
			go func() {
				p := bytes.Repeat([]byte{byte(writers + g)}, size)
				for {
					if _, err := w.Write(p); err != nil {
						if !errors.Is(err, shim.ErrStreamClosed) {
							badErr.Store(err)
						}
						outlived.Add(1)
						return
					}
				}
			}()
		}
		return nil
	})
	c := shim.NewClient(connect(t, s.URL()))
	for i := range 3 {
		rs, err := c.RequestStream(context.Background(), "conc", nil, shim.StreamWindow(8<<10))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rs)
		_ = rs.Close()
		if err != nil {
			t.Fatalf("after %d bytes: %v", len(got), err)
		}
		var count [2 * writers]int
		for _, b := range got {
			count[b]++
		}
		for g := range writers {
			if count[g] != writes*size {
				t.Errorf("writer %d: %d bytes arrived, want %d", g, count[g], writes*size)
			}
		}
		natstest.Eventually(t, 10*time.Second, func() bool { return outlived.Load() == int64(writers*(i+1)) }, "the late writers to fail")
		if v := badErr.Load(); v != nil {
			t.Fatalf("a writer failed with %v; want only ErrStreamClosed after the handler returned", v)
		}
	}
}
