package claimcheck_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
)

// TestMessagesDeleteFailureReturned: a Messages iterator has no error
// handler, so with DeleteAfterRead a payload that cannot be deleted after
// the message is acknowledged (here: the Store's own connection closed
// after the read, the consumer's still up) is reported by Ack itself, not
// dropped; the acknowledgement went through.
func TestMessagesDeleteFailureReturned(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	nc, js := connect(t, s.URL())
	_, cjs := connect(t, s.URL())
	st := newStore(t, js)
	stream := createStream(t, cjs, jetstream.StreamConfig{Name: "WORK", Subjects: []string{"work.>"}, Storage: jetstream.MemoryStorage})
	body := payload(3*limit, 4)
	if _, err := st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "work.a", Data: body}); err != nil {
		t.Fatal(err)
	}
	cons, err := stream.CreateOrUpdateConsumer(ctxT(t), jetstream.ConsumerConfig{Durable: "w", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := st.Messages(cons, claimcheck.DeleteAfterRead())
	if err != nil {
		t.Fatal(err)
	}
	defer ms.Stop()
	m, err := ms.Next()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Data(), body) {
		t.Fatalf("got %d bytes", len(m.Data()))
	}
	nc.Close() // the Store can no longer delete
	err = m.DoubleAck(context.Background())
	if err == nil || !errors.Is(err, nats.ErrConnectionClosed) {
		t.Fatalf("DoubleAck with the payload not deletable: %v, want the deletion's error", err)
	}
	info, err := cons.Info(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if info.NumAckPending != 0 || info.AckFloor.Stream != 1 {
		t.Fatalf("the message was not acknowledged: %d pending, ack floor %d", info.NumAckPending, info.AckFloor.Stream)
	}
}
