package claimcheck_test

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
)

// TestSubjectTransformNakNotTerm: a work-queue stream with a
// SubjectTransform stores the claim check under the transformed subject,
// so a receiver with the default subject binding gets ErrSubjectMismatch.
// The message must not be Term'd (that would delete the work item): it is
// Nak'd, stays in the stream, is redelivered, and a receiver with the
// binding off (or relaxed for exactly this transform) resolves it.
func TestSubjectTransformNakNotTerm(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.URL())
	st := newStore(t, js)
	stream := createStream(t, js, jetstream.StreamConfig{
		Name:             "TR",
		Subjects:         []string{"in.>"},
		SubjectTransform: &jetstream.SubjectTransformConfig{Source: "in.>", Destination: "out.>"},
		Retention:        jetstream.WorkQueuePolicy,
		Storage:          jetstream.MemoryStorage,
	})
	body := payload(3*limit, 40)
	if _, err := st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "in.job", Data: body}); err != nil {
		t.Fatal(err)
	}
	stored := lastMsg(t, stream)
	if stored.Subject != "out.job" || stored.Header.Get(claimcheck.HeaderRef) == "" {
		t.Fatalf("stream stored %q with headers %v; want the claim check under the transformed subject", stored.Subject, stored.Header)
	}

	cons, err := stream.CreateOrUpdateConsumer(ctxT(t), jetstream.ConsumerConfig{Durable: "w", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}

	// Default binding: refused, reported, and Nak'd, never Term'd.
	errs := make(chan error, 16)
	cc, err := st.Consume(cons, func(m jetstream.Msg) {
		t.Errorf("handler called for a claim check bound to another subject (%d bytes)", len(m.Data()))
	}, func(m jetstream.Msg, err error) { errs <- err }, claimcheck.NakDelay(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // the first delivery and a redelivery
		select {
		case err := <-errs:
			if !errors.Is(err, claimcheck.ErrSubjectMismatch) {
				t.Fatalf("error callback got %v, want ErrSubjectMismatch", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("delivery %d of the mismatched claim check not reported (Term'd?)", i+1)
		}
	}
	cc.Stop()
	if n := streamMsgs(t, stream); n != 1 {
		t.Fatalf("work-queue stream holds %d messages after the mismatch, want 1 (not Term'd)", n)
	}
	if len(objects(t, st)) != 1 {
		t.Fatal("the payload is gone")
	}

	// Relaxed binding: exactly this transform is accepted.
	relaxed := newStore(t, js, claimcheck.WithSubjectMatch(func(pub, got string) bool {
		return strings.HasPrefix(pub, "in.") && got == "out."+strings.TrimPrefix(pub, "in.")
	}))
	if data, err := relaxed.Resolve(ctxT(t), &nats.Msg{Subject: stored.Subject, Header: stored.Header}); err != nil || !bytes.Equal(data, body) {
		t.Fatalf("Resolve with WithSubjectMatch = %d bytes, %v", len(data), err)
	}
	if _, err := relaxed.Resolve(ctxT(t), &nats.Msg{Subject: "other", Header: stored.Header}); !errors.Is(err, claimcheck.ErrSubjectMismatch) {
		t.Fatalf("WithSubjectMatch accepted another subject: %v", err)
	}

	// Binding off: the redelivered message is resolved and acked.
	unbound := newStore(t, js, claimcheck.WithSubjectBinding(false))
	var mu sync.Mutex
	var got [][]byte
	handled := make(chan struct{}, 1)
	cc, err = unbound.Consume(cons, func(m jetstream.Msg) {
		if err := m.DoubleAck(ctxT(t)); err != nil {
			t.Errorf("DoubleAck: %v", err)
		}
		mu.Lock()
		got = append(got, m.Data())
		mu.Unlock()
		handled <- struct{}{}
	}, func(m jetstream.Msg, err error) { t.Errorf("consume with the binding off: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()
	select {
	case <-handled:
	case <-time.After(10 * time.Second):
		t.Fatal("the claim check was not redelivered to the unbound receiver")
	}
	mu.Lock()
	if len(got) != 1 || !bytes.Equal(got[0], body) {
		t.Fatalf("unbound receiver got %d messages", len(got))
	}
	mu.Unlock()
	natstest.Eventually(t, 10*time.Second, func() bool { return streamMsgs(t, stream) == 0 }, "work queue empty")
}
