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
)

// TestDuplicateDeletesNewPayload: a repeated publish with the same message
// ID is de-duplicated by the stream; the payload stored for the repeat is
// deleted since nothing refers to it.
func TestDuplicateDeletesNewPayload(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	natstest.Eventually(t, 10*time.Second, nc.IsConnected, "reconnected")
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
	t.Parallel()
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
	// Every message is acknowledged, so the server sends nothing more; its
	// count of deliveries, redeliveries included, is what the handler is
	// to have seen before it stops (a stray redelivery has arrived).
	info, err := cons.Info(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	natstest.Eventually(t, 10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		handled := 0
		for _, k := range seen {
			handled += k
		}
		return uint64(handled) >= info.Delivered.Consumer
	}, "the handler to see every delivery the server made")
	cc.Stop()
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
