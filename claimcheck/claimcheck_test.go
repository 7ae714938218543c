package claimcheck_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/internal/wire"
)

// sendAndReceive publishes m with PublishMsg and returns what a raw
// subscriber on m.Subject receives.
func sendAndReceive(t *testing.T, nc *nats.Conn, st *claimcheck.Store, m *nats.Msg) *nats.Msg {
	t.Helper()
	ch := make(chan *nats.Msg, 4)
	sub, err := nc.ChanSubscribe(m.Subject, ch)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := st.PublishMsg(ctxT(t), m); err != nil {
		t.Fatalf("PublishMsg(%d bytes): %v", len(m.Data), err)
	}
	return recv(t, ch)
}

func TestFitsUnchangedAndStoresNothing(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	m := &nats.Msg{Subject: "small", Data: []byte("hello"), Header: nats.Header{"K": {"v"}}}
	got := sendAndReceive(t, nc, st, m)
	if string(got.Data) != "hello" || got.Header.Get("K") != "v" || claimcheck.IsClaimCheck(got) {
		t.Fatalf("received %q %v, want the message unchanged", got.Data, got.Header)
	}
	if n := bucketMsgs(t, st); n != 0 {
		t.Fatalf("bucket holds %d messages after a message that fits", n)
	}
	prepared, err := st.Prepare(ctxT(t), m, 0)
	if err != nil || prepared != m {
		t.Fatalf("Prepare = %p, %v; want the same message %p", prepared, err, m)
	}
}

// TestLimitBoundary checks the exact byte: header block + body == limit
// goes unchanged, one byte more goes as a claim check.
func TestLimitBoundary(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	h := nats.Header{"Trace": {"abc"}}
	atLimit := limit - wire.HeaderSize(h)

	exact := &nats.Msg{Subject: "edge", Header: h, Data: payload(atLimit, 1)}
	if wire.MsgSize(exact.Header, len(exact.Data)) != limit {
		t.Fatal("test setup: message is not exactly at the limit")
	}
	got := sendAndReceive(t, nc, st, exact)
	if claimcheck.IsClaimCheck(got) || !bytes.Equal(got.Data, exact.Data) {
		t.Fatalf("a message exactly at the limit was not sent unchanged (claim check: %v)", claimcheck.IsClaimCheck(got))
	}
	if n := bucketMsgs(t, st); n != 0 {
		t.Fatalf("bucket holds %d messages after a message at the limit", n)
	}

	over := &nats.Msg{Subject: "edge", Header: h, Data: payload(atLimit+1, 2)}
	got = sendAndReceive(t, nc, st, over)
	if !claimcheck.IsClaimCheck(got) || len(got.Data) != 0 {
		t.Fatalf("one byte over the limit: received %d bytes, headers %v; want a claim check", len(got.Data), got.Header)
	}
	if got.Header.Get("Trace") != "abc" || got.Header.Get(claimcheck.HeaderSize) != strconv.Itoa(atLimit+1) {
		t.Fatalf("reference headers %v", got.Header)
	}
	data, err := st.Resolve(ctxT(t), got)
	if err != nil || !bytes.Equal(data, over.Data) {
		t.Fatalf("Resolve: %d bytes, %v", len(data), err)
	}
	if !nc.IsConnected() {
		t.Fatal("connection lost")
	}
	// The caller's message and header map are untouched.
	if len(over.Header) != 1 || len(over.Data) != atLimit+1 {
		t.Fatalf("caller's message modified: %v", over.Header)
	}
}

func TestRoundTripFiveTimesLimit(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	want := payload(5*limit, 3)
	got := sendAndReceive(t, nc, st, &nats.Msg{Subject: "five", Data: want})
	data, err := st.Resolve(ctxT(t), got)
	if err != nil || !bytes.Equal(data, want) {
		t.Fatalf("Resolve: %d bytes, %v", len(data), err)
	}
	// The object is an ordinary object store object: nats.go's Get reads it
	// and checks its digest.
	name := got.Header.Get(claimcheck.HeaderRef)
	raw, err := st.ObjectStore().GetBytes(ctxT(t), name)
	if err != nil || !bytes.Equal(raw, want) {
		t.Fatalf("ObjectStore.GetBytes: %d bytes, %v", len(raw), err)
	}
	info, err := st.ObjectStore().GetInfo(ctxT(t), name)
	if err != nil {
		t.Fatal(err)
	}
	if cs := info.Opts.ChunkSize; cs == 0 || cs > limit {
		t.Fatalf("chunk size %d, want at most the connection limit %d", cs, limit)
	}
	// Streaming form.
	r, err := st.Open(ctxT(t), got)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	streamed, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(streamed, want) {
		t.Fatalf("Open: %d bytes, %v", len(streamed), err)
	}
}

// TestRoundTrip100MiB: a 100 MiB payload goes through whole. It once
// failed under -race with "nats: no heartbeat received": the read now
// survives missed heartbeats (TestMissedHeartbeatDoesNotEndRead), and the
// read gets a deadline of its own, generous for a slow (race-instrumented,
// 2-core) machine. Skipped with -short.
func TestRoundTrip100MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("100 MiB round trip skipped with -short")
	}
	t.Parallel()
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	ch := make(chan *nats.Msg, 1)
	if _, err := nc.ChanSubscribe("big", ch); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	want := payload(100<<20, 4)
	start := time.Now()
	if err := st.PublishMsg(ctx, &nats.Msg{Subject: "big", Data: want}); err != nil {
		t.Fatalf("PublishMsg(100 MiB): %v", err)
	}
	got := recv(t, ch)
	t.Logf("100 MiB publish: %v", time.Since(start))
	data, err := st.Resolve(ctx, got)
	if err != nil || !bytes.Equal(data, want) {
		t.Fatalf("Resolve: %d bytes, %v", len(data), err)
	}
	t.Logf("100 MiB publish + resolve: %v", time.Since(start))
}

func TestAboveMaxRefusedBeforeStoring(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	ch := make(chan *nats.Msg, 1)
	if _, err := nc.ChanSubscribe("huge", ch); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, claimcheck.MaxSize+1)
	err := st.PublishMsg(ctxT(t), &nats.Msg{Subject: "huge", Data: big})
	if !errors.Is(err, claimcheck.ErrTooLarge) {
		t.Fatalf("PublishMsg(MaxSize+1) = %v, want ErrTooLarge", err)
	}
	if _, err := st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "huge", Data: big}); !errors.Is(err, claimcheck.ErrTooLarge) {
		t.Fatalf("PublishJetStream(MaxSize+1) = %v, want ErrTooLarge", err)
	}
	if n := bucketMsgs(t, st); n != 0 {
		t.Fatalf("bucket holds %d messages after a refused payload", n)
	}
	noMsg(t, ch)

	// A smaller configured maximum is enforced the same way, on both sides.
	small := newStore(t, js, claimcheck.WithBucket("small"), claimcheck.WithMaxObjectSize(100<<10))
	if err := small.PublishMsg(ctxT(t), &nats.Msg{Subject: "huge", Data: make([]byte, 100<<10+1)}); !errors.Is(err, claimcheck.ErrTooLarge) {
		t.Fatalf("PublishMsg above WithMaxObjectSize = %v, want ErrTooLarge", err)
	}
	ref := &nats.Msg{Subject: "huge", Header: nats.Header{
		claimcheck.HeaderRef:  {"aaaaaaaaaaaaaaaaaaaaaaaaaa"},
		claimcheck.HeaderSize: {strconv.Itoa(100<<10 + 1)}}}
	if _, err := small.Resolve(ctxT(t), ref); !errors.Is(err, claimcheck.ErrTooLarge) {
		t.Fatalf("Resolve of a reference above the maximum = %v, want ErrTooLarge", err)
	}
}

func TestFanOutEachSubscriberResolves(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.URL())
	st := newStore(t, js)
	want := payload(3*limit+17, 5)
	type result struct {
		data []byte
		hdr  nats.Header
	}
	results := make(chan result, 3)
	for i := 0; i < 3; i++ {
		rnc, rjs := connect(t, srv.URL())
		rst := newStore(t, rjs)
		if _, err := rst.Subscribe("fan", func(m *nats.Msg) {
			results <- result{m.Data, m.Header}
		}, func(m *nats.Msg, err error) { t.Errorf("subscriber %d: %v", i, err) }); err != nil {
			t.Fatal(err)
		}
		if err := rnc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.PublishMsg(ctxT(t), &nats.Msg{Subject: "fan", Data: want, Header: nats.Header{"X": {"1"}}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		select {
		case r := <-results:
			if !bytes.Equal(r.data, want) {
				t.Fatalf("subscriber got %d bytes, want %d", len(r.data), len(want))
			}
			if r.hdr.Get("X") != "1" || r.hdr.Get(claimcheck.HeaderRef) != "" {
				t.Fatalf("handler headers %v: want the caller's headers without the claim-check ones", r.hdr)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("only %d of 3 subscribers resolved", i)
		}
	}
	// Fan-out keeps the payload (TTL expiry only).
	if n := bucketMsgs(t, st); n == 0 {
		t.Fatal("payload deleted on a fan-out subject")
	}
}

func TestQueueSubscribeDeleteAfterRead(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	got := make(chan []byte, 2)
	for i := 0; i < 2; i++ {
		if _, err := st.QueueSubscribe("work", "workers", func(m *nats.Msg) { got <- m.Data },
			func(m *nats.Msg, err error) { t.Errorf("queue member: %v", err) }, claimcheck.DeleteAfterRead()); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	want := payload(2*limit, 6)
	if err := st.PublishMsg(ctxT(t), &nats.Msg{Subject: "work", Data: want}); err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-got:
		if !bytes.Equal(d, want) {
			t.Fatalf("got %d bytes", len(d))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery")
	}
	natstest.Eventually(t, 10*time.Second, func() bool { return bucketMsgs(t, st) == 0 }, "payload deleted after read")
	select {
	case <-got:
		t.Fatal("delivered twice in a queue group")
	default:
	}
}
