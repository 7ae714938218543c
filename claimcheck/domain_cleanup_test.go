package claimcheck_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
)

// slowHub starts a hub (domain "hub") and a leaf ("edge"), a Store at the
// edge on bucket, and a Store on the hub that may read and delete the
// edge's claim checks (WithDomains), connected through a delay line that
// adds rtt to every round trip.
func slowHub(t *testing.T, bucket string, rtt time.Duration) (edge, hub *claimcheck.Store) {
	t.Helper()
	hl := natstest.StartHubLeaf(t,
		[]natstest.Option{natstest.MaxPayload(limit), natstest.JetStream(), natstest.Domain("hub")},
		[]natstest.Option{natstest.MaxPayload(limit), natstest.JetStream(), natstest.Domain("edge")})
	_, ljs := connect(t, hl.Leaf.URL())
	edge = newStore(t, ljs, claimcheck.WithBucket(bucket))
	dl := natstest.StartDelayLine(t, fmt.Sprintf("127.0.0.1:%d", hl.Hub.Port()), rtt/2)
	hnc, _ := connect(t, "nats://"+dl.Addr())
	hjs, err := jetstream.NewWithDomain(hnc, "hub")
	if err != nil {
		t.Fatal(err)
	}
	return edge, newStore(t, hjs, claimcheck.WithDomains("edge"))
}

// TestDiscardOtherDomainSlowLink: the hub's Discard of a claim check
// stored in the edge's domain completes across a link with a round trip
// of a second: each of its requests (the meta data, the chunks' purge, the
// meta data's purge) has a bound of its own. Before, the whole deletion
// (five requests) had one second and never finished there.
func TestDiscardOtherDomainSlowLink(t *testing.T) {
	t.Parallel()
	edge, hub := slowHub(t, "edge_slow", time.Second)
	ref, err := edge.Prepare(ctxT(t), &nats.Msg{Subject: "edge.data", Data: payload(3*limit, 75)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := hub.Discard(ctxT(t), ref); err != nil {
		t.Fatalf("the hub's Discard across a 1 s round trip: %v", err)
	}
	if n := bucketMsgs(t, edge); n != 0 {
		t.Fatalf("the edge's bucket holds %d messages after the hub's Discard", n)
	}
}

// TestDeleteAfterReadOtherDomainSlowLink: a hub subscriber with
// DeleteAfterRead resolves the edge's claim checks across a link with a
// 600 ms round trip and deletes each payload after its handler: nothing
// is left at the edge and no deletion is reported failed.
func TestDeleteAfterReadOtherDomainSlowLink(t *testing.T) {
	t.Parallel()
	edge, hub := slowHub(t, "edge_dar", 600*time.Millisecond)
	const msgs = 3
	var handled, failed atomic.Int32
	sub, err := hub.Subscribe("edge.dar", func(*nats.Msg) { handled.Add(1) }, func(_ *nats.Msg, err error) {
		failed.Add(1)
		t.Errorf("subscriber: %v", err)
	}, claimcheck.DeleteAfterRead())
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	probe := make(chan *nats.Msg, 64)
	if _, err := hub.Conn().ChanSubscribe("edge.probe", probe); err != nil {
		t.Fatal(err)
	}
	if err := hub.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	// The subscriptions' interest crosses the leafnode: once a probe
	// arrives, the claim checks' does too.
	natstest.Eventually(t, 20*time.Second, func() bool {
		_ = edge.Conn().Publish("edge.probe", nil)
		select {
		case <-probe:
			return true
		case <-time.After(200 * time.Millisecond):
			return false
		}
	}, "the hub's subscription seen at the edge")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := range msgs {
		if err := edge.PublishMsg(ctx, &nats.Msg{Subject: "edge.dar", Data: payload(3*limit, uint64(77+i))}); err != nil {
			t.Fatal(err)
		}
	}
	natstest.Eventually(t, time.Minute, func() bool { return handled.Load() == msgs }, "every claim check handled")
	// The handlers, each deleting its payload, are done once the
	// subscription has drained.
	if err := sub.Drain(); err != nil {
		t.Fatal(err)
	}
	natstest.Eventually(t, time.Minute, func() bool { return !sub.IsValid() }, "the subscription drained")
	if n := bucketMsgs(t, edge); n != 0 || failed.Load() != 0 {
		t.Fatalf("the edge's bucket holds %d messages, %d deletions failed", n, failed.Load())
	}
}
