package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/internal/objstore"
)

// slowObjects stores objects subjects o.0, o.1... of msgs messages of
// size bytes each on a server reached through a proxy that holds every
// direct get reply of more than a kilobyte for delay before the next one
// passes: a link (or a starved reader) that delivers one such reply per
// delay. It returns a Reader through the proxy with a 16 MiB budget.
func slowObjects(t *testing.T, objects, msgs, size int, delay time.Duration) *objstore.Reader {
	t.Helper()
	srv := natstest.Start(t, natstest.JetStream())
	createS(t, srv.URL(), "o.>", func(ctx context.Context, js jetstream.JetStream) error {
		for o := range objects {
			for i := range msgs {
				if _, err := js.Publish(ctx, fmt.Sprintf("o.%d", o), body(o, i, size)); err != nil { //natssend:reviewed test data
					return err
				}
			}
		}
		return nil
	})
	p := srv.Proxy(t)
	p.On(natstest.Rule{Dir: natstest.ToClient, Every: true, Action: natstest.Delay, Delay: delay,
		Match: func(f natstest.Frame) bool { return f.HasHeader("Nats-Subject") && len(f.Data) > 1024 }})
	nc, js := dialJS(t, p.URL())
	return objstore.NewReader(nc, objstore.APIPrefix(js), "S", 16<<20)
}

// body is message i of object o.
func body(o, i, size int) []byte {
	b := bytes.Repeat([]byte{byte(o)}, size)
	b[0], b[1] = byte(i), byte(o)
	return b
}

// readObject reads object o's msgs messages as claimcheck does: one
// batch for all of them, asked again from the first missing one when it
// stalls or breaks. It returns how many batches it asked for.
func readObject(ctx context.Context, r *objstore.Reader, o, msgs, size int, stall time.Duration) (int, error) {
	subject := fmt.Sprintf("o.%d", o)
	var next uint64 = 1
	got, asked := 0, 0
	for got < msgs {
		b, err := r.Batch(ctx, subject, next, msgs-got, (msgs-got)*size)
		if err != nil {
			return asked, err
		}
		asked++
		for got < msgs {
			m, err := b.Next(ctx, stall)
			if errors.Is(err, objstore.ErrStalled) || errors.Is(err, objstore.ErrGap) || errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Close()
				return asked, err
			}
			if !bytes.Equal(m.Data, body(o, got, size)) {
				b.Close()
				return asked, fmt.Errorf("%s: message %d is not the one stored", subject, got)
			}
			got++
			next = m.Seq + 1
		}
		b.Close()
	}
	return asked, nil
}

// TestBusyConnectionDoesNotStall: 24 reads of 512 KiB each share a
// connection whose replies arrive one 64 KiB message every 10 ms (about
// 2 s for everything asked for at once, four times the stall time): the
// replies of the later batches wait behind the earlier ones' without
// being given up, since the connection goes on receiving what it is
// owed. Every read gets its messages with one request and no batch is
// counted lost. With a fixed stall time (before the stall rule) most
// batches were given up and asked for again.
func TestBusyConnectionDoesNotStall(t *testing.T) {
	const objects, msgs, size = 24, 8, 64 << 10
	const stall = 500 * time.Millisecond
	r := slowObjects(t, objects, msgs, size, 10*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	var asked atomic.Int64
	for o := range objects {
		wg.Go(func() {
			n, err := readObject(ctx, r, o, msgs, size, stall)
			asked.Add(int64(n))
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	st := r.Stats()
	t.Logf("%d batches asked for, %d given up as lost", asked.Load(), st.Lost)
	if st.Lost != 0 || asked.Load() != objects {
		t.Fatalf("%d batches given up, %d asked for; want none given up and %d asked for", st.Lost, asked.Load(), objects)
	}
	natstest.Eventually(t, 10*time.Second, func() bool { return r.Budget().Used() == 0 }, "the budget given back")
	// At most 6.4 MB/s arrive: the budget's limit is what arrives in about
	// a second, not its 16 MiB, so other messages on the connection do not
	// queue behind seconds of chunks.
	if l := r.Budget().Limit(); l > 10<<20 {
		t.Errorf("the budget's limit is %d bytes on a link of 6.4 MB/s, want what arrives in a second", l)
	}
}

// TestBudgetLimit: a lowered limit holds back what no longer fits, a
// request larger than the limit is granted once nothing is owed, and a
// raised limit grants the waiters that fit.
func TestBudgetLimit(t *testing.T) {
	b := objstore.NewBudget(16 << 20)
	b.SetLimit(1) // raised to the 1 MiB floor
	if l := b.Limit(); l != 1<<20 {
		t.Fatalf("limit %d, want the 1 MiB floor", l)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if n, err := b.Acquire(ctx, 4<<20); err != nil || n != 4<<20 {
		t.Fatalf("Acquire(4 MiB) with nothing owed = %d, %v; want it granted", n, err)
	}
	got := make(chan int64, 1)
	go func() {
		n, _ := b.Acquire(ctx, 512<<10)
		got <- n
	}()
	natstest.Eventually(t, 10*time.Second, func() bool { return b.Waiting() == 1 }, "the second request to wait")
	b.SetLimit(8 << 20)
	if n := <-got; n != 512<<10 {
		t.Fatalf("granted %d after the limit was raised", n)
	}
	b.SetLimit(64 << 20)
	if l := b.Limit(); l != 16<<20 {
		t.Fatalf("limit %d, want at most the budget's size", l)
	}
}

// TestLostBatchOnBusyConnection: a batch whose replies are all lost
// (its EOB too) while the connection never goes quiet (the other reads
// read their objects again and again) is still given up (ErrStalled)
// once the connection has received more than it owed when the batch was
// asked for, and the read asked again completes; no other read loses a
// batch.
func TestLostBatchOnBusyConnection(t *testing.T) {
	const objects, msgs, size = 12, 8, 64 << 10
	const stall = 500 * time.Millisecond
	r := slowObjects(t, objects, msgs, size, 5*time.Millisecond)
	var mu sync.Mutex
	lostInbox, dropping := "", true
	r.DropReplies(func(m *nats.Msg) bool {
		mu.Lock()
		defer mu.Unlock()
		if dropping && lostInbox == "" && m.Header.Get("Nats-Subject") == "o.0" {
			lostInbox = m.Subject // the first batch of o.0: all its replies
		}
		return m.Subject == lostInbox
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var done atomic.Bool
	var wg sync.WaitGroup
	asked, reads := make([]int, objects), make([]int, objects)
	for o := 1; o < objects; o++ {
		wg.Go(func() {
			for !done.Load() {
				n, err := readObject(ctx, r, o, msgs, size, stall)
				asked[o] += n
				reads[o]++
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	natstest.Eventually(t, 10*time.Second, func() bool { return r.Stats().Requests >= objects-1 }, "the other reads' requests")
	go func() {
		// Let o.0's replies through once its batch was given up.
		natstest.Eventually(t, time.Minute, func() bool { return r.Stats().Lost > 0 }, "the lost batch given up")
		mu.Lock()
		dropping, lostInbox = false, ""
		mu.Unlock()
	}()
	n, err := readObject(ctx, r, 0, msgs, size, stall)
	done.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if st := r.Stats(); st.Lost != 1 || n != 2 {
		t.Fatalf("%d batches given up, o.0 asked %d times; want its one lost batch given up and asked again", st.Lost, n)
	}
	for o := 1; o < objects; o++ {
		if asked[o] != reads[o] {
			t.Errorf("o.%d asked %d times for %d reads, want once each", o, asked[o], reads[o])
		}
	}
}

// TestStallWaitGrows: a range whose batch was given up as stalled (on a
// quiet connection: after the stall time) waits twice as long before its
// next batch is given up, four times for the third, and is still asked
// for again after that.
func TestStallWaitGrows(t *testing.T) {
	_, r := stream(t, 4)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const stall = 300 * time.Millisecond
	r.DropReplies(func(*nats.Msg) bool { return true })
	for i, want := range []time.Duration{stall, 2 * stall, 4 * stall} {
		b, err := r.Batch(ctx, "s.a", 1, 4, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = b.Next(ctx, stall)
		took := time.Since(start)
		b.Close()
		if !errors.Is(err, objstore.ErrStalled) || took < want {
			t.Fatalf("batch %d: %v after %v; want ErrStalled after %v at least", i+1, err, took, want)
		}
	}
	r.DropReplies(nil)
	b, err := r.Batch(ctx, "s.a", 1, 4, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := b.Next(ctx, stall); err != nil || string(m.Data) != "a0" {
		t.Fatalf("the range asked again: %v, %v", m, err)
	}
	b.Close()
}
