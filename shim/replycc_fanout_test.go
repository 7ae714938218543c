package shim_test

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// TestFanOutClaimCheckedReplies: two plain (non-queue) subscribers on
// one subject, both with ServeClaimChecks, both answering with an
// oversized reply: the usual "first responder wins" fan-out. The caller
// gets one whole reply, and nothing is left in the bucket (one reply is
// stored per request; the one that comes late to an ended call is
// deleted).
func TestFanOutClaimCheckedReplies(t *testing.T) {
	t.Parallel()
	e := newOverflowEnv(t)
	rnc2 := connect(t, e.s.URL())
	rst2 := newStore(t, rnc2)
	sizes := []int{3 * overflowLimit, 5 * overflowLimit}
	bodies := [][]byte{payload(sizes[0], 1), payload(sizes[1], 2)}
	var answered atomic.Int64
	for i, pair := range []struct {
		nc *nats.Conn
		st *claimcheck.Store
	}{{e.rnc, e.rst}, {rnc2, rst2}} {
		i := i
		h := shim.Handler(func(context.Context, *nats.Msg) ([]byte, error) {
			return bodies[i], nil
		}, shim.ServeClaimChecks(pair.st), shim.Conn(pair.nc), shim.OnError(func(_ *nats.Msg, err error) {
			if err != shim.ErrNoConn {
				t.Logf("responder %d: %v", i, err)
			}
		}))
		// answered counts the requests this responder is done with: its
		// reply stored and sent, or refused.
		if _, err := pair.nc.Subscribe("svc", func(m *nats.Msg) { h(m); answered.Add(1) }); err != nil {
			t.Fatal(err)
		}
		_ = pair.nc.Flush()
	}
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst), shim.WithTimeout(10*time.Second))
	fails := 0
	for i := 0; i < 10; i++ {
		reply, err := c.Request(context.Background(), "svc", []byte("q"))
		if err != nil {
			fails++
			t.Errorf("call %d: %v (outcome %v)", i, err, shim.Classify(err))
			continue
		}
		if !bytes.Equal(reply.Data, bodies[0]) && !bytes.Equal(reply.Data, bodies[1]) {
			t.Errorf("call %d: reply of %d bytes is neither responder's", i, len(reply.Data))
		}
	}
	// Both responders are done with every call; then the caller deletes
	// what the late replies stored as their references arrive.
	natstest.Eventually(t, 30*time.Second, func() bool { return answered.Load() == 2*10 }, "both responders done with every call")
	if n := e.storedAfter(t, 30*time.Second, nil); n != 0 {
		t.Errorf("%d messages left in the bucket after %d calls", n, 10)
	}
}
