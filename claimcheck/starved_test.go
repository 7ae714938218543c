package claimcheck_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/internal/objstore"
)

// starvedScale is how many claim checks of how many bytes the starved
// tests read, and how many goroutines spin meanwhile: by default a few
// dozen of 1 MiB, with two spinning per GOMAXPROCS (the reads get a
// third of the process's CPU), the proxy pacing chunk replies 10 ms
// apart; NATSSEND_STARVED_READS, NATSSEND_STARVED_SIZE,
// NATSSEND_STARVED_SPIN and NATSSEND_STARVED_PACE_MS (0: no pacing) set
// them (make starved: 50 of 2 MiB on a third of one core).
func starvedScale(tb testing.TB, reads, size int) (int, int, int, time.Duration) {
	spinners, paceMS := 2*runtime.GOMAXPROCS(0), 10
	for _, v := range []struct {
		name string
		n    *int
	}{{"NATSSEND_STARVED_READS", &reads}, {"NATSSEND_STARVED_SIZE", &size}, {"NATSSEND_STARVED_SPIN", &spinners}, {"NATSSEND_STARVED_PACE_MS", &paceMS}} {
		if s := os.Getenv(v.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				tb.Fatalf("%s=%q: want a number", v.name, s)
			}
			*v.n = n
		}
	}
	return reads, size, spinners, time.Duration(paceMS) * time.Millisecond
}

// slowReplies makes p hold every direct get reply carrying a chunk for
// delay before the next passes: a reader that takes in one chunk per
// delay (a starved CPU, a slow link).
func slowReplies(p *natstest.Proxy, delay time.Duration) {
	p.On(natstest.Rule{Dir: natstest.ToClient, Every: true, Action: natstest.Delay, Delay: delay,
		Match: func(f natstest.Frame) bool { return f.HasHeader("Nats-Subject") && len(f.Data) > 1024 }})
}

// TestStarvedReads: many claim checks read at once on one Store (a third
// with Resolve, a third with Open, a third by a Subscribe handler with
// DeleteAfterRead), with spinning goroutines taking two thirds of the
// CPU and a
// proxy that lets the reader take in one 64 KiB chunk per 10 ms, so that
// what the Store's reads ask for at once (its 16 MiB budget) takes over
// twice the 2 s stall check to arrive. Every read returns the exact
// payload within its deadline, a batch is rarely given up and asked for
// again (at most one per four reads), and once each payload is deleted
// nothing is left in the bucket. With a fixed stall time (before the
// stall rule) the later batches of the queue were asked for again and
// again, each re-ask adding to the backlog.
func TestStarvedReads(t *testing.T) {
	reads, size, spinners, pace := starvedScale(t, 24, 1<<20)
	srv := startServer(t)
	_, wjs := connect(t, srv.URL())
	writer := newStore(t, wjs)
	p := srv.Proxy(t)
	_, rjs := connect(t, p.URL())
	reader := newStore(t, rjs)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	refs := make([]*nats.Msg, reads)
	for i := range refs {
		ref, err := writer.Prepare(ctx, &nats.Msg{Subject: "starved", Data: payload(size, uint64(i))}, 0)
		if err != nil {
			t.Fatal(err)
		}
		ref.Header.Set("N", strconv.Itoa(i))
		refs[i] = ref
	}

	got := make(chan *nats.Msg, reads)
	// A DeleteAfterRead clean-up may still be checking its purge when the
	// test ends and closes the connections: that report, after the bucket
	// was found empty, is teardown's.
	var ended atomic.Bool
	sub, err := reader.Subscribe("starved", func(m *nats.Msg) { got <- m },
		func(_ *nats.Msg, err error) {
			if ended.Load() && errors.Is(err, nats.ErrConnectionClosed) {
				return
			}
			t.Errorf("subscriber: %v", err)
		}, claimcheck.DeleteAfterRead())
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := reader.Conn().Flush(); err != nil {
		t.Fatal(err)
	}

	if pace > 0 {
		slowReplies(p, pace)
	}
	natstest.Starve(t, spinners)
	before := objstore.Totals()
	start := time.Now()
	var wg sync.WaitGroup
	for i, ref := range refs {
		want := payload(size, uint64(i))
		switch i % 3 {
		case 0: // the subscriber resolves it
			if err := writer.Conn().PublishMsg(ref); err != nil { //natssend:reviewed test: a reference of a few hundred bytes
				t.Fatal(err)
			}
		case 1:
			wg.Go(func() {
				rctx, rcancel := context.WithTimeout(ctx, 3*time.Minute)
				defer rcancel()
				data, err := reader.Resolve(rctx, ref)
				if err != nil || !bytes.Equal(data, want) {
					t.Errorf("Resolve %d: %d bytes, %v", i, len(data), err)
				}
				if err := reader.Discard(ctx, ref); err != nil {
					t.Errorf("Discard %d: %v", i, err)
				}
			})
		case 2:
			wg.Go(func() {
				rctx, rcancel := context.WithTimeout(ctx, 3*time.Minute)
				defer rcancel()
				rc, err := reader.Open(rctx, ref)
				if err != nil {
					t.Errorf("Open %d: %v", i, err)
					return
				}
				data, err := io.ReadAll(rc)
				rc.Close()
				if err != nil || !bytes.Equal(data, want) {
					t.Errorf("Open %d: %d bytes, %v", i, len(data), err)
				}
				if err := reader.Discard(ctx, ref); err != nil {
					t.Errorf("Discard %d: %v", i, err)
				}
			})
		}
	}
	for i := 0; i < reads; i += 3 {
		select {
		case m := <-got:
			n, _ := strconv.Atoi(m.Header.Get("N"))
			if !bytes.Equal(m.Data, payload(size, uint64(n))) {
				t.Errorf("subscriber: message %d is not its payload", n)
			}
		case <-time.After(3 * time.Minute):
			t.Fatal("the subscriber's messages did not all arrive")
		}
	}
	wg.Wait()
	took := time.Since(start)
	after := objstore.Totals()
	lost := after.Lost - before.Lost
	t.Logf("%d reads of %d bytes in %v: %d requests, %d batches given up and asked for again", reads, size, took, after.Requests-before.Requests, lost)
	if lost > uint64(reads/4) {
		t.Errorf("%d batches given up for %d reads; want at most %d", lost, reads, reads/4)
	}
	natstest.Eventually(t, 30*time.Second, func() bool { return bucketMsgs(t, writer) == 0 }, "the bucket to be empty")
	ended.Store(true)
}
