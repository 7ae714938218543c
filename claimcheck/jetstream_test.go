package claimcheck_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/internal/wire"
)

func createStream(t *testing.T, js jetstream.JetStream, cfg jetstream.StreamConfig) jetstream.Stream {
	t.Helper()
	s, err := js.CreateStream(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// lastMsg returns the last message stored in a stream.
func lastMsg(t *testing.T, s jetstream.Stream) *jetstream.RawStreamMsg {
	t.Helper()
	info, err := s.Info(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.GetMsg(ctxT(t), info.State.LastSeq)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func streamMsgs(t *testing.T, s jetstream.Stream) uint64 {
	t.Helper()
	info, err := s.Info(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// objects returns the names of the objects in the Store's bucket.
func objects(t *testing.T, st *claimcheck.Store) []string {
	t.Helper()
	list, err := st.ObjectStore().List(ctxT(t))
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range list {
		names = append(names, o.Name)
	}
	return names
}

// TestJetStreamHeadersTipTheBalance: a body that just fits a plain publish
// but not with the headers JetStream options add goes as a claim check,
// and the connection stays open; with room for those headers it goes
// unchanged.
func TestJetStreamHeadersTipTheBalance(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	stream := createStream(t, js, jetstream.StreamConfig{Name: "JS", Subjects: []string{"js.>"}, Storage: jetstream.MemoryStorage})

	body := payload(limit, 20) // exactly at the limit without headers
	ack, err := st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "js.a", Data: body}, jetstream.WithMsgID("m-1"))
	if err != nil {
		t.Fatal(err)
	}
	got := lastMsg(t, stream)
	if got.Header.Get(claimcheck.HeaderRef) == "" || len(got.Data) != 0 || got.Header.Get(jetstream.MsgIDHeader) != "m-1" || ack.Sequence != got.Sequence {
		t.Fatalf("stored %d bytes with headers %v; want a claim check carrying the message ID", len(got.Data), got.Header)
	}
	if !nc.IsConnected() {
		t.Fatal("connection closed")
	}
	data, err := st.Resolve(ctxT(t), &nats.Msg{Subject: got.Subject, Header: got.Header, Data: got.Data})
	if err != nil || !bytes.Equal(data, body) {
		t.Fatalf("Resolve: %v", err)
	}

	// Exactly room for the Nats-Msg-Id header: unchanged.
	idHdr := nats.Header{jetstream.MsgIDHeader: {"m-2"}}
	fit := payload(limit-wire.HeaderSize(idHdr), 21)
	if _, err := st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "js.a", Data: fit}, jetstream.WithMsgID("m-2")); err != nil {
		t.Fatal(err)
	}
	got = lastMsg(t, stream)
	if got.Header.Get(claimcheck.HeaderRef) != "" || !bytes.Equal(got.Data, fit) {
		t.Fatalf("a message that fits with its JetStream headers was not stored unchanged: %v", got.Header)
	}
	if err := nc.Flush(); err != nil || !nc.IsConnected() {
		t.Fatalf("connection after publishes: %v", err)
	}
}

// TestStreamMaxMsgSize: a stream with max_msg_size 1 KiB on a 64 KiB
// server turns a 2 KiB publish into a claim check instead of an error,
// also when the limit was set after the Store cached the stream.
func TestStreamMaxMsgSize(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.URL())
	st := newStore(t, js)
	small := createStream(t, js, jetstream.StreamConfig{Name: "SMALL", Subjects: []string{"small.>"}, MaxMsgSize: 1024, Storage: jetstream.MemoryStorage})
	body := payload(2048, 22)
	if _, err := st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "small.x", Data: body}); err != nil {
		t.Fatalf("PublishJetStream(2 KiB) to a 1 KiB stream: %v", err)
	}
	got := lastMsg(t, small)
	if got.Header.Get(claimcheck.HeaderRef) == "" {
		t.Fatal("not a claim check")
	}
	if data, err := st.Resolve(ctxT(t), &nats.Msg{Subject: got.Subject, Header: got.Header}); err != nil || !bytes.Equal(data, body) {
		t.Fatalf("Resolve: %v", err)
	}

	// Stale cache: the limit is lowered after the Store looked the stream up.
	later := createStream(t, js, jetstream.StreamConfig{Name: "LATER", Subjects: []string{"later.>"}, Storage: jetstream.MemoryStorage})
	if _, err := st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "later.x", Data: body}); err != nil {
		t.Fatal(err)
	}
	if h := lastMsg(t, later).Header; h.Get(claimcheck.HeaderRef) != "" {
		t.Fatal("2 KiB went as a claim check to a stream without a limit")
	}
	cfg := later.CachedInfo().Config
	cfg.MaxMsgSize = 1024
	if _, err := js.UpdateStream(ctxT(t), cfg); err != nil {
		t.Fatal(err)
	}
	ack, err := st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "later.x", Data: body})
	if err != nil {
		t.Fatalf("PublishJetStream after the limit was lowered: %v", err)
	}
	if n := streamMsgs(t, later); n != 2 {
		t.Fatalf("stream holds %d messages, want 2 (one per call)", n)
	}
	got = lastMsg(t, later)
	if got.Sequence != ack.Sequence || got.Header.Get(claimcheck.HeaderRef) == "" {
		t.Fatalf("after a refused publish: stored %v, want a claim check", got.Header)
	}
	if data, err := st.Resolve(ctxT(t), &nats.Msg{Subject: got.Subject, Header: got.Header}); err != nil || !bytes.Equal(data, body) {
		t.Fatalf("Resolve: %v", err)
	}
}

func TestWorkQueueConsumerResolves(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.URL())
	st := newStore(t, js)
	stream := createStream(t, js, jetstream.StreamConfig{Name: "WQ", Subjects: []string{"jobs"}, Retention: jetstream.WorkQueuePolicy, Storage: jetstream.MemoryStorage})
	cons, err := stream.CreateOrUpdateConsumer(ctxT(t), jetstream.ConsumerConfig{Durable: "workers", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	big := payload(3*limit, 23)
	small := []byte("small job")
	for _, b := range [][]byte{big, small} {
		if _, err := st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "jobs", Data: b, Header: nats.Header{"Job": {"1"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if len(objects(t, st)) != 1 {
		t.Fatal("want exactly one stored payload")
	}
	got := make(chan jetstream.Msg, 2)
	cc, err := st.Consume(cons, func(m jetstream.Msg) {
		if err := m.DoubleAck(context.Background()); err != nil {
			t.Errorf("DoubleAck: %v", err)
		}
		got <- m
	}, func(m jetstream.Msg, err error) { t.Errorf("consume: %v", err) }, claimcheck.DeleteAfterRead())
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()
	for _, want := range [][]byte{big, small} {
		select {
		case m := <-got:
			if !bytes.Equal(m.Data(), want) || m.Headers().Get("Job") != "1" || m.Headers().Get(claimcheck.HeaderRef) != "" {
				t.Fatalf("handler got %d bytes, headers %v", len(m.Data()), m.Headers())
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no delivery")
		}
	}
	natstest.Eventually(t, 10*time.Second, func() bool { return streamMsgs(t, stream) == 0 }, "work queue empty")
	if n := bucketMsgs(t, st); n != 0 {
		t.Fatalf("bucket holds %d messages after the work item was acked with DeleteAfterRead", n)
	}
}

// TestConsumeSettlesFailures: a claim check whose payload is missing is
// Term'd and reported, never acked and never handed to the handler; the
// Messages iterator returns it with a *ResolveError and goes on.
func TestConsumeSettlesFailures(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.URL())
	st := newStore(t, js)
	stream := createStream(t, js, jetstream.StreamConfig{Name: "EV", Subjects: []string{"ev"}, Storage: jetstream.MemoryStorage})
	missing := &nats.Msg{Subject: "ev", Header: nats.Header{
		claimcheck.HeaderRef: {"aaaaaaaaaaaaaaaaaaaaaaaaaa"}, claimcheck.HeaderSize: {"100000"}}}
	if _, err := js.PublishMsg(ctxT(t), missing); err != nil {
		t.Fatal(err)
	}
	good := payload(2*limit, 24)
	if _, err := st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "ev", Data: good}); err != nil {
		t.Fatal(err)
	}

	cons, err := stream.CreateOrUpdateConsumer(ctxT(t), jetstream.ConsumerConfig{Durable: "c1", AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var errs []error
	handled := make(chan []byte, 4)
	cc, err := st.Consume(cons, func(m jetstream.Msg) {
		_ = m.Ack()
		handled <- m.Data()
	}, func(m jetstream.Msg, err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-handled:
		if !bytes.Equal(d, good) {
			t.Fatalf("handler got %d bytes", len(d))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("good message not handled")
	}
	// Wait past the ack wait: a Term'd message is not redelivered.
	time.Sleep(1500 * time.Millisecond)
	cc.Stop()
	mu.Lock()
	if len(errs) != 1 || !errors.Is(errs[0], claimcheck.ErrMissing) {
		t.Fatalf("error callback got %v, want one ErrMissing", errs)
	}
	mu.Unlock()
	select {
	case d := <-handled:
		t.Fatalf("handler called again with %d bytes", len(d))
	default:
	}
	info, err := cons.Info(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if info.NumAckPending != 0 || info.NumRedelivered != 0 || info.AckFloor.Stream != 2 {
		t.Fatalf("consumer: ack pending %d, redelivered %d, ack floor %d; want the failure Term'd",
			info.NumAckPending, info.NumRedelivered, info.AckFloor.Stream)
	}

	// The iterator form.
	cons2, err := stream.CreateOrUpdateConsumer(ctxT(t), jetstream.ConsumerConfig{Durable: "c2", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	it, err := st.Messages(cons2)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Stop()
	m, err := it.Next(jetstream.NextMaxWait(10 * time.Second))
	var re *claimcheck.ResolveError
	if !errors.As(err, &re) || !errors.Is(err, claimcheck.ErrMissing) || m == nil {
		t.Fatalf("Next on the missing payload = %v, %v; want the message and a *ResolveError", m, err)
	}
	m, err = it.Next(jetstream.NextMaxWait(10 * time.Second))
	if err != nil || !bytes.Equal(m.Data(), good) {
		t.Fatalf("Next after a failure = %v", err)
	}
	if err := m.Ack(); err != nil {
		t.Fatal(err)
	}
}
