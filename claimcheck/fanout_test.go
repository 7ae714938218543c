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

	"github.com/natssend/natssend/claimcheck"
)

// TestFanOutReadersBeyondConsumerLimit: 2,000 and then 10,000 readers of
// one claim check, all started together on one Store (one connection),
// all get the exact payload from a server with default limits, where a
// stream takes at most 1,000 consumers: reads create none. The stream's
// consumer count is watched while they read and must stay 0.
func TestFanOutReadersBeyondConsumerLimit(t *testing.T) {
	// Not in parallel: 10000 readers, each with a deadline, need the CPU.
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	want := payload(limit+1000, 21) // two chunks
	ref := sendAndReceive(t, nc, st, &nats.Msg{Subject: "fan", Data: want})
	stream, err := js.Stream(ctxT(t), "OBJ_"+st.Bucket())
	if err != nil {
		t.Fatal(err)
	}
	for _, readers := range []int{2000, 10000} {
		t.Run(fmt.Sprint(readers), func(t *testing.T) {
			if readers > 2000 && raceEnabled {
				// Under -race the 10,000 readers' connection falls behind
				// as a slow consumer on a 2-core machine: the detector's
				// cost, not the read path's. make test runs them.
				t.Skip("10,000 readers run without the race detector (make test)")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			start := make(chan struct{})
			var wg sync.WaitGroup
			var ok, bad atomic.Int32
			firstErr := make(chan error, 1)
			for range readers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					got, err := st.Resolve(ctx, ref)
					if err == nil && bytes.Equal(got, want) {
						ok.Add(1)
						return
					}
					bad.Add(1)
					if err == nil {
						err = fmt.Errorf("%d bytes, not the payload", len(got))
					}
					select {
					case firstErr <- err:
					default:
					}
				}()
			}
			done := make(chan struct{})
			var maxConsumers int
			go func() {
				defer close(done)
				for ok.Load()+bad.Load() < int32(readers) {
					if info, err := stream.Info(ctx); err == nil {
						maxConsumers = max(maxConsumers, info.State.Consumers)
					}
					select {
					case <-ctx.Done():
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
			}()
			close(start)
			wg.Wait()
			<-done
			if bad.Load() > 0 {
				t.Fatalf("%d of %d readers failed, first: %v", bad.Load(), readers, <-firstErr)
			}
			if maxConsumers != 0 {
				t.Fatalf("the bucket's stream had %d consumers during the reads", maxConsumers)
			}
		})
	}
}

// apiCounter counts the JetStream API requests (every $JS.API subject:
// direct gets, consumer creation, stream info...) the server receives,
// from a connection of its own.
type apiCounter struct {
	nc *nats.Conn
	ch chan *nats.Msg
}

func newAPICounter(t *testing.T, url string) *apiCounter {
	nc, _ := connect(t, url)
	c := &apiCounter{nc: nc, ch: make(chan *nats.Msg, 1024)}
	if _, err := nc.ChanSubscribe("$JS.API.>", c.ch); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return c
}

// take returns the subjects of the requests counted since the last take.
// The requests were answered before it is called, so the server has
// queued them to the counter before it answers the counter's flush, and
// nats.go puts a channel subscription's messages in its channel in the
// order they arrive, before it sees the flush's answer.
func (c *apiCounter) take(t *testing.T) []string {
	if err := c.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for {
		select {
		case m := <-c.ch:
			subjects = append(subjects, m.Subject)
		default:
			return subjects
		}
	}
}

// TestSmallResolveTwoRequests: a claim check of one chunk and one of two
// resolve with two requests to the server each (the meta data, then one
// batch of chunks), both direct gets, whatever the order of the reads;
// an Open of the two-chunk one too.
func TestSmallResolveTwoRequests(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.URL())
	st := newStore(t, js)
	one, err := st.Prepare(ctxT(t), &nats.Msg{Subject: "rt", Data: payload(60000, 22)}, 8000)
	if err != nil {
		t.Fatal(err)
	}
	two, err := st.Prepare(ctxT(t), &nats.Msg{Subject: "rt", Data: payload(limit+1000, 23)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	count := newAPICounter(t, srv.URL())
	count.take(t)
	for i, ref := range []*nats.Msg{one, two, one, two} {
		if _, err := st.Resolve(ctxT(t), ref); err != nil {
			t.Fatal(err)
		}
		reqs := count.take(t)
		if len(reqs) > 2 {
			t.Fatalf("resolve %d (%s bytes) made %d requests: %v", i, ref.Header.Get(claimcheck.HeaderSize), len(reqs), reqs)
		}
		for _, s := range reqs {
			if !bytes.HasPrefix([]byte(s), []byte("$JS.API.DIRECT.GET.")) {
				t.Fatalf("resolve %d made a request that is no direct get: %s", i, s)
			}
		}
		if len(reqs) != 2 {
			t.Fatalf("resolve %d: %d requests counted (%v), want the meta data's and the chunks'", i, len(reqs), reqs)
		}
	}
	r, err := st.Open(ctxT(t), two)
	if err != nil {
		t.Fatal(err)
	}
	buf := new(bytes.Buffer)
	if _, err := buf.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if reqs := count.take(t); len(reqs) != 2 {
		t.Fatalf("Open of two chunks made %d requests: %v", len(reqs), reqs)
	}
}
