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
	waitFor(t, "work queue empty", func() bool { return streamMsgs(t, stream) == 0 })
	if n := bucketMsgs(t, st); n != 0 {
		t.Fatalf("bucket holds %d messages after the work item was acked with DeleteAfterRead", n)
	}
}

// TestConsumeSettlesFailures: a claim check whose payload is missing is
// Term'd and reported, never acked and never handed to the handler; the
// Messages iterator returns it with a *ResolveError and goes on.
func TestConsumeSettlesFailures(t *testing.T) {
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

// TestDuplicateDeletesNewPayload: a repeated publish with the same message
// ID is de-duplicated by the stream; the payload stored for the repeat is
// deleted since nothing refers to it.
func TestDuplicateDeletesNewPayload(t *testing.T) {
	srv := startServer(t)
	_, js := connect(t, srv.URL())
	st := newStore(t, js)
	stream := createStream(t, js, jetstream.StreamConfig{Name: "DD", Subjects: []string{"dd"}, Storage: jetstream.MemoryStorage})
	body := payload(2*limit, 25)
	for i := 0; i < 2; i++ {
		ack, err := st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "dd", Data: body}, jetstream.WithMsgID("once"))
		if err != nil {
			t.Fatal(err)
		}
		if ack.Duplicate != (i == 1) {
			t.Fatalf("publish %d: duplicate = %v", i, ack.Duplicate)
		}
	}
	if n := streamMsgs(t, stream); n != 1 {
		t.Fatalf("stream holds %d messages", n)
	}
	objs := objects(t, st)
	if len(objs) != 1 || objs[0] != lastMsg(t, stream).Header.Get(claimcheck.HeaderRef) {
		t.Fatalf("bucket holds %v; want only the referenced payload", objs)
	}
}

// TestRefusedReferenceDeletesPayload: when the stream refuses the
// reference (here a failed expectation), nothing refers to the payload and
// it is deleted; the error is returned.
func TestRefusedReferenceDeletesPayload(t *testing.T) {
	srv := startServer(t)
	_, js := connect(t, srv.URL())
	st := newStore(t, js)
	stream := createStream(t, js, jetstream.StreamConfig{Name: "EX", Subjects: []string{"ex"}, Storage: jetstream.MemoryStorage})
	_, err := st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "ex", Data: payload(2*limit, 26)}, jetstream.WithExpectLastSequence(42))
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("PublishJetStream with a failing expectation = %v, want the API error", err)
	}
	if n := streamMsgs(t, stream); n != 0 {
		t.Fatalf("stream holds %d messages", n)
	}
	if n := bucketMsgs(t, st); n != 0 {
		t.Fatalf("bucket holds %d messages after the reference was refused", n)
	}
	// No stream on the subject: no responders, payload deleted too.
	if _, err := st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "nostream", Data: payload(2*limit, 27)}, jetstream.WithRetryAttempts(0)); err == nil {
		t.Fatal("publish to a subject without a stream succeeded")
	}
	if n := bucketMsgs(t, st); n != 0 {
		t.Fatalf("bucket holds %d messages after publishing to no stream", n)
	}
}

// TestServerRestartDuringUpload: the server restarts while a large payload
// is being stored. Without the reconnect buffer the publish fails, nothing
// is published, and once the client is back no chunk of the failed upload
// is left. With nats.go's reconnect buffer, what was written while the
// server was away can go out after the reconnect and the upload may
// complete: then exactly one reference is published, it resolves
// byte-exact, and the bucket holds that object and nothing else.
func TestServerRestartDuringUpload(t *testing.T) {
	t.Run("reconnect buffer", func(t *testing.T) { testRestartDuringUpload(t, false) })
	// As shim.Connect configures connections: publishes fail at once while
	// reconnecting instead of being buffered.
	t.Run("no reconnect buffer", func(t *testing.T) { testRestartDuringUpload(t, true, nats.ReconnectBufSize(-1)) })
}

func testRestartDuringUpload(t *testing.T, mustFail bool, opts ...nats.Option) {
	srv := startServer(t)
	nc, js := connect(t, srv.URL(), append([]nats.Option{nats.MaxReconnects(-1), nats.ReconnectWait(50 * time.Millisecond)}, opts...)...)
	st := newStore(t, js, claimcheck.WithStorage(jetstream.FileStorage), claimcheck.WithBucket("files"))
	createStream(t, js, jetstream.StreamConfig{Name: "RS", Subjects: []string{"rs"}, Storage: jetstream.FileStorage})

	// Restart once the first chunks are stored.
	restarted := make(chan struct{})
	wnc, _ := connect(t, srv.URL())
	var once sync.Once
	if _, err := wnc.Subscribe("$O.files.C.>", func(*nats.Msg) {
		once.Do(func() {
			go func() {
				srv.Restart(natstest.MaxPayload(limit), natstest.JetStream())
				close(restarted)
			}()
		})
	}); err != nil {
		t.Fatal(err)
	}
	if err := wnc.Flush(); err != nil {
		t.Fatal(err)
	}
	big := payload(64<<20, 28)
	_, pubErr := st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "rs", Data: big})
	if pubErr == nil && mustFail {
		t.Fatal("PublishJetStream succeeded across a server restart")
	}
	t.Logf("publish across the restart: %v", pubErr)
	<-restarted
	waitFor(t, "reconnected", nc.IsConnected)
	stream, err := js.Stream(ctxT(t), "RS")
	if err != nil {
		t.Fatal(err)
	}
	if pubErr != nil {
		if n := streamMsgs(t, stream); n != 0 {
			t.Fatalf("the failed call published %d messages", n)
		}
		if n := bucketMsgs(t, st); n != 0 {
			t.Fatalf("bucket holds %d messages (orphan chunks) after the failed upload", n)
		}
	} else {
		if n := streamMsgs(t, stream); n != 1 {
			t.Fatalf("the call published %d messages, want 1", n)
		}
		ref := lastMsg(t, stream)
		if data, err := st.Resolve(ctxT(t), &nats.Msg{Subject: "rs", Header: ref.Header}); err != nil || !bytes.Equal(data, big) {
			t.Fatalf("Resolve of the reference published across the restart: %v", err)
		}
		infos, err := st.ObjectStore().List(ctxT(t))
		if err != nil || len(infos) != 1 {
			t.Fatalf("bucket lists %d objects (%v), want 1", len(infos), err)
		}
		if n, want := bucketMsgs(t, st), uint64(infos[0].Chunks)+1; n != want {
			t.Fatalf("bucket holds %d messages, want the object's %d (orphan chunks)", n, want)
		}
	}
	// The Store works again.
	body := payload(2*limit, 29)
	if _, err := st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "rs", Data: body}); err != nil {
		t.Fatalf("publish after the restart: %v", err)
	}
	got := lastMsg(t, stream)
	if data, err := st.Resolve(ctxT(t), &nats.Msg{Subject: "rs", Header: got.Header}); err != nil || !bytes.Equal(data, body) {
		t.Fatalf("Resolve after the restart: %v", err)
	}
}

// TestConsumeDoesNotPrefetch: while the handler (or a large read) holds
// one message longer than the consumer's AckWait, no other message sits
// prefetched in the client with its ack timer running: none is
// redelivered and each is handled exactly once. With nats.go's default
// batch of 500 the waiting messages would time out and come again.
func TestConsumeDoesNotPrefetch(t *testing.T) {
	srv := startServer(t)
	_, js := connect(t, srv.URL())
	st := newStore(t, js)
	stream := createStream(t, js, jetstream.StreamConfig{Name: "PF", Subjects: []string{"pf"}, Storage: jetstream.MemoryStorage})
	const n = 4
	for i := 0; i < n; i++ {
		if _, err := st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "pf", Data: []byte{byte(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	cons, err := stream.CreateOrUpdateConsumer(ctxT(t), jetstream.ConsumerConfig{Durable: "slow", AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[byte]int{}
	done := make(chan struct{})
	cc, err := st.Consume(cons, func(m jetstream.Msg) {
		if m.Data()[0] == 0 {
			// Hold the first message for twice the ack wait, keeping
			// only it alive, as Consume does during a long read.
			for i := 0; i < 4; i++ {
				_ = m.InProgress()
				time.Sleep(500 * time.Millisecond)
			}
		}
		if err := m.DoubleAck(context.Background()); err != nil {
			t.Errorf("DoubleAck: %v", err)
		}
		mu.Lock()
		seen[m.Data()[0]]++
		if len(seen) == n {
			select {
			case <-done:
			default:
				close(done)
			}
		}
		mu.Unlock()
	}, func(m jetstream.Msg, err error) { t.Errorf("consume: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("not every message was handled")
	}
	time.Sleep(300 * time.Millisecond) // let a stray redelivery arrive
	cc.Stop()
	info, err := cons.Info(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for i := byte(0); i < n; i++ {
		if seen[i] != 1 {
			t.Errorf("message %d handled %d times", i, seen[i])
		}
	}
	if info.NumRedelivered != 0 {
		t.Errorf("%d messages redelivered while the first was being handled", info.NumRedelivered)
	}

	// A caller's own batch by bytes still works (nats.go refuses it
	// together with a message count, so it replaces the default).
	cons2, err := stream.CreateOrUpdateConsumer(ctxT(t), jetstream.ConsumerConfig{Durable: "bytes", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{}, n)
	cc2, err := st.Consume(cons2, func(m jetstream.Msg) { _ = m.Ack(); got <- struct{}{} },
		func(m jetstream.Msg, err error) { t.Errorf("consume: %v", err) },
		claimcheck.PullConsumeOpts(jetstream.PullMaxBytes(1<<20)))
	if err != nil {
		t.Fatalf("Consume with PullMaxBytes: %v", err)
	}
	defer cc2.Stop()
	for i := 0; i < n; i++ {
		select {
		case <-got:
		case <-time.After(10 * time.Second):
			t.Fatal("Consume with PullMaxBytes delivered nothing")
		}
	}
}
