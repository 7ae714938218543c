package claimcheck_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
)

// limit is the test server's max_payload.
const limit = 64 << 10

func startServer(tb testing.TB, opts ...natstest.Option) *natstest.Server {
	tb.Helper()
	return natstest.Start(tb, append([]natstest.Option{natstest.MaxPayload(limit), natstest.JetStream()}, opts...)...)
}

func connect(tb testing.TB, url string, opts ...nats.Option) (*nats.Conn, jetstream.JetStream) {
	tb.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		tb.Fatal(err)
	}
	return nc, js
}

// newStore creates a Store on a memory bucket unless opts say otherwise.
func newStore(tb testing.TB, js jetstream.JetStream, opts ...claimcheck.Option) *claimcheck.Store {
	tb.Helper()
	st, err := claimcheck.New(ctxT(tb), js, append([]claimcheck.Option{claimcheck.WithStorage(jetstream.MemoryStorage)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

func ctxT(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

// bucketMsgs returns how many messages (chunks and meta data) the bucket's
// stream holds.
func bucketMsgs(tb testing.TB, st *claimcheck.Store) uint64 {
	tb.Helper()
	status, err := st.ObjectStore().Status(ctxT(tb))
	if err != nil {
		tb.Fatal(err)
	}
	return status.(*jetstream.ObjectBucketStatus).StreamInfo().State.Msgs
}

// payload returns n deterministic pseudo-random bytes.
func payload(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	for i := n &^ 7; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

// recv waits for one message on ch.
func recv(tb testing.TB, ch <-chan *nats.Msg) *nats.Msg {
	tb.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(10 * time.Second):
		tb.Fatal("no message received")
		return nil
	}
}

// noMsg asserts that nothing arrives on ch for a short while.
func noMsg(tb testing.TB, ch <-chan *nats.Msg) {
	tb.Helper()
	select {
	case m := <-ch:
		tb.Fatalf("unexpected message on %q: %d bytes, header %v", m.Subject, len(m.Data), m.Header)
	case <-time.After(200 * time.Millisecond):
	}
}
