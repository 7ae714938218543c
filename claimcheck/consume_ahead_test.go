package claimcheck_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
)

// TestConsumeResolvesNextWhileHandling: while Consume's handler holds the
// first claim check, the second one's payload is read (its meta data is
// asked for with a direct get, which a watcher sees); only then does the
// handler let the first go. Both arrive whole, each once, none
// redelivered. A Consume that read the next payload only after the
// handler returned would never let the handler go (the test would time
// out).
func TestConsumeResolvesNextWhileHandling(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	stream := createStream(t, js, jetstream.StreamConfig{Name: "AHEAD", Subjects: []string{"ahead"}, Storage: jetstream.MemoryStorage})
	bodies := [][]byte{payload(3*limit, 61), payload(3*limit, 62)}
	var names []string
	for _, b := range bodies {
		if _, err := st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "ahead", Data: b}); err != nil {
			t.Fatal(err)
		}
	}
	for seq := uint64(1); seq <= 2; seq++ {
		m, err := stream.GetMsg(ctxT(t), seq)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, m.Header.Get(claimcheck.HeaderRef))
	}
	// The second object's meta data asked for: its read has begun.
	secondRead := make(chan struct{})
	var once sync.Once
	meta := "$O." + st.Bucket() + ".M." + base64.URLEncoding.EncodeToString([]byte(names[1]))
	if _, err := nc.Subscribe("$JS.API.DIRECT.GET.>", func(m *nats.Msg) {
		if strings.HasSuffix(m.Subject, "."+meta) {
			once.Do(func() { close(secondRead) })
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	cons, err := stream.CreateOrUpdateConsumer(ctxT(t), jetstream.ConsumerConfig{Durable: "ahead", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 4)
	cc, err := st.Consume(cons, func(m jetstream.Msg) {
		if bytes.Equal(m.Data(), bodies[0]) {
			select {
			case <-secondRead:
			case <-time.After(30 * time.Second):
				t.Error("the next claim check was not read while the handler held the first")
			}
		}
		if err := m.DoubleAck(context.Background()); err != nil {
			t.Errorf("DoubleAck: %v", err)
		}
		got <- m.Data()
	}, func(m jetstream.Msg, err error) { t.Errorf("consume: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()
	for i := range bodies {
		select {
		case b := <-got:
			if !bytes.Equal(b, bodies[i]) {
				t.Fatalf("message %d: %d bytes, not its payload", i, len(b))
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("message %d not handled", i)
		}
	}
	cc.Stop()
	select {
	case <-cc.Closed():
	case <-time.After(30 * time.Second):
		t.Fatal("Closed not closed after Stop")
	}
	info, err := cons.Info(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if info.NumRedelivered != 0 || info.NumAckPending != 0 {
		t.Fatalf("%d redelivered, %d pending acknowledgement", info.NumRedelivered, info.NumAckPending)
	}
}
