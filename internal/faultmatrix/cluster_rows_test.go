package faultmatrix_test

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// failover is the bound for what a stream leader's loss may take: a new
// leader's election included.
const failover = 30 * time.Second

// clusterEnv is a 3-node cluster with the claim-check bucket replicated
// on every node, a caller connected through a proxy to a node that does
// not lead the bucket's stream, and a direct connection to that node.
type clusterEnv struct {
	c      *natstest.Cluster
	leader *natstest.Server // the stream leader, lost in every row
	p      *natstest.Proxy
	caller *nats.Conn
	peer   *nats.Conn // a direct connection to the caller's node
	cst    *claimcheck.Store
	pst    *claimcheck.Store
}

func newClusterEnv(t *testing.T) *clusterEnv {
	t.Helper()
	c := natstest.StartCluster(t, 3, natstest.MaxPayload(limit), natstest.JetStream())
	admin := dial(t, c.URLs())
	js, err := jetstream.New(admin)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), failover)
	defer cancel()
	// Right after the cluster is up, JetStream may still answer 503
	// (temporarily unavailable) for a moment: the setup tries again.
	for {
		_, err := claimcheck.New(ctx, js, claimcheck.WithBucket(bucket), claimcheck.WithTTL(ttl), claimcheck.WithReplicas(3))
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.WaitStreamCurrent("OBJ_"+bucket, failover)
	e := &clusterEnv{c: c, leader: c.StreamLeader("OBJ_" + bucket)}
	var node *natstest.Server
	for _, s := range c.Servers {
		if s != e.leader {
			node = s
			break
		}
	}
	e.p = node.Proxy(t)
	e.caller, e.peer = dial(t, e.p.URL()), dial(t, node.URL())
	e.cst, e.pst = store(t, e.caller), store(t, e.peer)
	return e
}

// loseLeader shuts the stream leader down at the proxy's rule r.
func (e *clusterEnv) loseLeader(r natstest.Rule) *natstest.Trigger {
	r.Hook = func(natstest.Frame) { e.leader.Shutdown() }
	return e.p.On(r)
}

func (e *clusterEnv) checkEmpty(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(failover)
	for {
		msgs, names, err := leftoverIn(e.pst)
		if err == nil && msgs == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("bucket after %v: %d stream messages, objects %q (err %v); want nothing", failover, msgs, names, err)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A few rows on a 3-node cluster that loses the claim-check stream's
// leader.
func TestClusterLeaderLoss(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("3-node clusters: slow")
	}
	// One cluster at a time: nine servers at once starve a loaded machine.
	runRowsAtOnce(t, 1, []fnRow{
		{"Store.PublishMsg: leader lost during the upload", func(t *testing.T) {
			e := newClusterEnv(t)
			ch := make(chan *nats.Msg, 4)
			if _, err := e.peer.ChanSubscribe("ev.>", ch); err != nil {
				t.Fatal(err)
			}
			if err := e.peer.Flush(); err != nil {
				t.Fatal(err)
			}
			trig := e.loseLeader(chunkUp(2))
			data := payload(bigSize, 9)
			ctx, cancel := context.WithTimeout(context.Background(), failover)
			defer cancel()
			err := e.cst.PublishMsg(ctx, &nats.Msg{Subject: "ev.data", Data: data})
			trig.Wait(t, failover)
			switch {
			case err == nil: // stored on the new leader, then published
				select {
				case m := <-ch:
					got, rerr := e.pst.Resolve(ctx, m)
					if rerr != nil || !bytes.Equal(got, data) {
						t.Fatalf("published, but resolves to %d bytes (err %v)", len(got), rerr)
					}
				case <-ctx.Done():
					t.Fatal("PublishMsg returned nil and nothing arrived")
				}
			case errors.Is(err, claimcheck.ErrNotPublished):
				e.checkEmpty(t)
			default:
				t.Fatalf("err = %v: neither published nor ErrNotPublished", err)
			}
		}},
		{"Store.Resolve: leader lost when the chunks are asked for", func(t *testing.T) {
			e := newClusterEnv(t)
			data := payload(bigSize, 10)
			ctx, cancel := context.WithTimeout(context.Background(), 2*failover)
			defer cancel()
			ref := e.prepare(ctx, t, data)
			trig := e.loseLeader(batchUp)
			start := time.Now()
			got, err := e.cst.Resolve(ctx, ref)
			trig.Wait(t, failover)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read %d bytes, err %v; want the %d stored", len(got), err, len(data))
			}
			if d := time.Since(start); d > failover {
				t.Errorf("the read took %v", d)
			}
		}},
		{"Client.Request: claim-checked reply, leader lost during the download", func(t *testing.T) {
			e := newClusterEnv(t)
			big := payload(bigSize, 11)
			var ran atomic.Int32
			h := shim.Handler(func(context.Context, *nats.Msg) ([]byte, error) { ran.Add(1); return big, nil },
				shim.ServeClaimChecks(e.pst), shim.Conn(e.peer))
			if _, err := e.peer.Subscribe(subject, h); err != nil {
				t.Fatal(err)
			}
			if err := e.peer.Flush(); err != nil {
				t.Fatal(err)
			}
			trig := e.loseLeader(chunkDown(2))
			ctx, cancel := context.WithTimeout(context.Background(), 2*failover)
			defer cancel()
			c := shim.NewClient(e.caller, shim.WithClaimChecks(e.cst), shim.WithTimeout(2*failover))
			reply, err := c.Request(ctx, subject, []byte("q"))
			trig.Wait(t, failover)
			if err != nil || !bytes.Equal(reply.Data, big) {
				t.Fatalf("err %v; want the %d-byte reply", err, len(big))
			}
			if n := ran.Load(); n != 1 {
				t.Errorf("the handler ran %d times", n)
			}
			e.checkEmpty(t)
		}},
	})
}
