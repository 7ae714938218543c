package shim_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/internal/natstest"
)

// TestConsumeResumesAfterReconnect: a JetStream consumer on a connection
// from Connect resumes at once after each reconnect. Its next pull
// request, which nats.go sends as soon as the connection is CONNECTED
// again, is small enough for the placeholder limit; a placeholder of 0
// would refuse it, and the consumer would wait for its missed-heartbeat
// timer (30 s by default) after every reconnect.
func TestConsumeResumesAfterReconnect(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t, natstest.JetStream())
	nc := connect(t, s.URL())
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "RESUME", Subjects: []string{"resume"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "d", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{}, 10)
	var mu sync.Mutex
	var consumeErrs []error
	cc, err := c.Consume(func(m jetstream.Msg) { _ = m.Ack(); got <- struct{}{} },
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			mu.Lock()
			consumeErrs = append(consumeErrs, err)
			mu.Unlock()
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()
	for round := range 3 {
		r0 := nc.Stats().Reconnects
		s.Restart(natstest.JetStream())
		natstest.Reconnected(t, nc, r0)
		start := time.Now()
		for {
			if _, err := js.Publish(ctx, "resume", []byte("x")); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		select {
		case <-got:
			t.Logf("round %d: delivered %v after the reconnect", round, time.Since(start).Round(time.Millisecond))
		case <-time.After(10 * time.Second):
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("round %d: nothing delivered 10 s after the reconnect (consumer errors %v)", round, consumeErrs)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, err := range consumeErrs {
		if errors.Is(err, nats.ErrMaxPayload) {
			t.Fatalf("the consumer's own pull request was refused: %v", consumeErrs)
		}
	}
}
