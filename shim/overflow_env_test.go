package shim_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
)

// overflowEnv is a 64 KiB server with JetStream, a caller connection and a
// responder connection, each with a claim-check Store on the same bucket.
type overflowEnv struct {
	s          *natstest.Server
	nc, rnc    *nats.Conn
	cst, rst   *claimcheck.Store
	tap        *tap
	bucketName string
}

func newOverflowEnv(t testing.TB) *overflowEnv {
	t.Helper()
	s := natstest.Start(t, natstest.MaxPayload(overflowLimit), natstest.JetStream())
	e := &overflowEnv{s: s, nc: connect(t, s.URL()), rnc: connect(t, s.URL()), bucketName: claimcheck.DefaultBucket}
	e.cst = newStore(t, e.nc)
	e.rst = newStore(t, e.rnc)
	e.tap = newTap(t, connect(t, s.URL()), "svc", "_INBOX.>")
	return e
}

func newStore(t testing.TB, nc *nats.Conn) *claimcheck.Store {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := claimcheck.New(context.Background(), js, claimcheck.WithStorage(jetstream.MemoryStorage), claimcheck.WithTTL(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// stored is the number of messages (chunks and meta) in the bucket's
// stream: 0 when every payload was deleted and no chunk was left behind.
func (e *overflowEnv) stored(t testing.TB) uint64 {
	t.Helper()
	js, _ := jetstream.New(e.nc)
	str, err := js.Stream(context.Background(), "OBJ_"+e.bucketName)
	if err != nil {
		t.Fatal(err)
	}
	info, err := str.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// storedAfter is what the bucket holds once it is empty or d has passed,
// whichever comes first: clean-up the caller does as late replies arrive
// takes its time. poke, if not nil, runs between looks, every 200 ms.
func (e *overflowEnv) storedAfter(t testing.TB, d time.Duration, poke func()) uint64 {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		n := e.stored(t)
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		if poke != nil {
			poke()
			time.Sleep(200 * time.Millisecond)
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// serveHandler subscribes h on "svc" on the responder connection.
func (e *overflowEnv) serveHandler(t testing.TB, h nats.MsgHandler) {
	t.Helper()
	if _, err := e.rnc.Subscribe("svc", h); err != nil {
		t.Fatal(err)
	}
	if err := e.rnc.Flush(); err != nil {
		t.Fatal(err)
	}
}

// tap records, on a connection of its own, the messages on its subjects:
// whether each was a claim check, and its logical size (the body, or the
// declared size of a claim check).
type tap struct {
	mu   sync.Mutex
	seen []tapped
	nc   *nats.Conn
}

type tapped struct {
	subject string
	claim   bool
	size    int
}

func newTap(t testing.TB, nc *nats.Conn, subjects ...string) *tap {
	t.Helper()
	tp := &tap{nc: nc}
	for _, s := range subjects {
		if _, err := nc.Subscribe(s, func(m *nats.Msg) {
			r := tapped{subject: m.Subject, claim: claimcheck.IsClaimCheck(m), size: len(m.Data)}
			if r.claim {
				r.size, _ = strconv.Atoi(m.Header.Get(claimcheck.HeaderSize))
			}
			tp.mu.Lock()
			tp.seen = append(tp.seen, r)
			tp.mu.Unlock()
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return tp
}

// count returns how many messages of logical size n on subjects with the
// given prefix were claim checks and how many plain, and forgets them all.
func (tp *tap) count(t testing.TB, prefix string, n int) (claim, plain int) {
	t.Helper()
	// What the server delivered before the PONG is in the subscriptions'
	// queues when Flush returns; the barrier runs once each queue has been
	// handled up to it.
	if err := tp.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	handled := make(chan struct{})
	if err := tp.nc.Barrier(func() { close(handled) }); err != nil {
		t.Fatal(err)
	}
	select {
	case <-handled:
	case <-time.After(30 * time.Second):
		t.Fatal("the tap did not handle what it was delivered")
	}
	tp.mu.Lock()
	defer tp.mu.Unlock()
	for _, r := range tp.seen {
		if r.size == n && len(r.subject) >= len(prefix) && r.subject[:len(prefix)] == prefix {
			if r.claim {
				claim++
			} else {
				plain++
			}
		}
	}
	tp.seen = nil
	return claim, plain
}

func (tp *tap) on(prefix string) int {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	n := 0
	for _, r := range tp.seen {
		if len(r.subject) >= len(prefix) && r.subject[:len(prefix)] == prefix {
			n++
		}
	}
	return n
}

func payload(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// sizedResponder answers every request with payload(n) where n is the
// decimal request header "Want", and records what it received.
type sizedResponder struct {
	mu   sync.Mutex
	runs int
	got  []byte
	hdr  nats.Header
}

func (r *sizedResponder) fn(_ context.Context, m *nats.Msg) ([]byte, error) {
	r.mu.Lock()
	r.runs++
	r.got = append([]byte(nil), m.Data...)
	r.hdr = m.Header
	r.mu.Unlock()
	n, _ := strconv.Atoi(m.Header.Get("Want"))
	return payload(n, 2), nil
}

func (r *sizedResponder) state() (int, []byte, nats.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs, r.got, r.hdr
}
