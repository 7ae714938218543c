package objstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/internal/objstore"
)

// stream starts a server with a stream S on s.> holding n messages on
// s.a (bodies "a0", "a1"...) interleaved with n on s.b, and returns a
// Reader of it.
func stream(t *testing.T, n int) (*nats.Conn, *objstore.Reader) {
	t.Helper()
	srv := natstest.Start(t, natstest.JetStream())
	createS(t, srv.URL(), "s.>", func(ctx context.Context, js jetstream.JetStream) error {
		for i := range n {
			for _, subj := range []string{"s.a", "s.b"} {
				if _, err := js.Publish(ctx, subj, fmt.Appendf(nil, "%s%d", subj[2:], i)); err != nil { //natssend:reviewed test data, a few bytes
					return err
				}
			}
		}
		return nil
	})
	nc, js := dialJS(t, srv.URL(), nats.ReconnectBufSize(-1))
	return nc, objstore.NewReader(nc, objstore.APIPrefix(js), "S", 1<<20)
}

// dialJS connects to url, closing the connection with t's cleanup.
func dialJS(t *testing.T, url string, opts ...nats.Option) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(url, append([]nats.Option{nats.ReconnectBufSize(-1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// createS creates the stream S on subjects (memory storage, direct gets)
// on the server at url and fills it with fill.
func createS(t *testing.T, url, subjects string, fill func(ctx context.Context, js jetstream.JetStream) error) {
	t.Helper()
	_, js := dialJS(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{subjects}, Storage: jetstream.MemoryStorage, AllowDirect: true}); err != nil {
		t.Fatal(err)
	}
	if err := fill(ctx, js); err != nil {
		t.Fatal(err)
	}
}

// TestBatchReadsBySubject: a batch returns the subject's messages from
// the sequence asked for, in order, each checked against the one before,
// and ends with the EOB's count of what is left; a request past the last
// message is ErrNotFound.
func TestBatchReadsBySubject(t *testing.T) {
	_, r := stream(t, 5)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := r.Batch(ctx, "s.a", 3, 2, 1<<20) // s.a's messages are at 1, 3, 5, 7, 9
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var seqs []uint64
	for {
		m, err := b.Next(ctx, 10*time.Second)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got, seqs = append(got, string(m.Data)), append(seqs, m.Seq)
	}
	b.Close()
	if fmt.Sprint(got) != "[a1 a2]" || fmt.Sprint(seqs) != "[3 5]" || b.Pending != 2 || b.Single() {
		t.Fatalf("batch: %v at %v, %d pending, single %v; want [a1 a2] at [3 5], 2 pending", got, seqs, b.Pending, b.Single())
	}
	b, err = r.Batch(ctx, "s.a", 10, 2, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Next(ctx, 10*time.Second); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("batch past the end: %v, want ErrNotFound", err)
	}
	b.Close()
	m, err := r.Last(ctx, "s.b")
	if err != nil || string(m.Data) != "b4" || m.Seq != 10 {
		t.Fatalf("Last(s.b) = %+v, %v", m, err)
	}
	if _, err := r.Last(ctx, "s.c"); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("Last(s.c) = %v, want ErrNotFound", err)
	}
	if m, err := r.LeaderLast(ctx, "s.a"); err != nil || string(m.Data) != "a4" {
		t.Fatalf("LeaderLast(s.a) = %+v, %v", m, err)
	}
	if st := r.Stats(); st.Requests != 5 || st.Lost != 0 {
		t.Fatalf("stats %+v, want 5 requests, none lost", st)
	}
}

// TestBatchReportsLostReply: a reply lost in the middle of a batch (here
// dropped after it arrived) is reported as ErrGap at the next reply, a
// lost last reply at the EOB, and a batch whose replies never come as
// ErrStalled; each counts as lost.
func TestBatchReportsLostReply(t *testing.T) {
	_, r := stream(t, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range []struct {
		drop string
		want error
		n    int // messages read before it
	}{{"a1", objstore.ErrGap, 1}, {"a3", objstore.ErrGap, 3}, {"", objstore.ErrStalled, 0}} {
		r.DropReplies(func(m *nats.Msg) bool { return c.drop == "" || string(m.Data) == c.drop })
		b, err := r.Batch(ctx, "s.a", 1, 4, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			_, err = b.Next(ctx, 500*time.Millisecond)
			if err != nil {
				break
			}
			n++
		}
		b.Close()
		if !errors.Is(err, c.want) || n != c.n {
			t.Fatalf("drop %q: %d read, then %v; want %d, then %v", c.drop, n, err, c.n, c.want)
		}
	}
	r.DropReplies(nil)
	if lost := r.Stats().Lost; lost != 3 {
		t.Fatalf("%d batches counted lost, want 3", lost)
	}
}

// TestBudget: Acquire waits for room in order, gives up at its
// context's end without taking anything, and never takes more than the
// budget.
func TestBudget(t *testing.T) {
	b := objstore.NewBudget(100)
	ctx := context.Background()
	if n, err := b.Acquire(ctx, 1000); err != nil || n != 100 {
		t.Fatalf("Acquire(1000) = %d, %v; want the whole budget", n, err)
	}
	short, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := b.Acquire(short, 10); !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire on a full budget with a cancelled context = %v", err)
	}
	got := make(chan int64, 2)
	for _, n := range []int64{60, 30} {
		go func() {
			m, err := b.Acquire(ctx, n)
			if err != nil {
				t.Error(err)
			}
			got <- m
		}()
		// The second waiter must queue behind the first: wait until the
		// first is queued (it cannot be granted yet: the budget is full).
		natstest.Eventually(t, 10*time.Second, func() bool { return b.Waiting() >= 1 }, "a waiter")
	}
	natstest.Eventually(t, 10*time.Second, func() bool { return b.Waiting() == 2 }, "two waiters")
	b.Release(100)
	a, c := <-got, <-got
	if a+c != 90 {
		t.Fatalf("granted %d and %d, want 60 and 30", a, c)
	}
	b.Release(90)
	if n, err := b.Acquire(ctx, 100); err != nil || n != 100 {
		t.Fatalf("Acquire after every release = %d, %v", n, err)
	}
}
