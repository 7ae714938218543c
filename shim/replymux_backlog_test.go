package shim_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/shim"
)

// TestBacklogLeavesNoReplyPayloads: a responder that works through a
// backlog (nats.go delivers one subscription's messages one at a time):
// requests queued behind slow
// ones start long after their callers gave up, with a fresh deadline
// (HeaderTimeout is measured from when the handler starts), store their
// oversized replies and send the references to callers that ended more
// than lateReplyGrace ago, while the caller keeps making other calls (which
// sweep ended registrations). Nobody crashed, so no payload may stay in the
// bucket ("Only a crash of one side can leave a payload behind").
func TestBacklogLeavesNoReplyPayloads(t *testing.T) {
	t.Parallel()
	e := newOverflowEnv(t)
	var ran, answered atomic.Int64
	h := shim.Handler(func(ctx context.Context, _ *nats.Msg) ([]byte, error) {
		time.Sleep(900 * time.Millisecond) // the slow handler the backlog builds behind
		ran.Add(1)
		return payload(4*overflowLimit, 3), nil
	}, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc))
	// answered counts the requests whose reply has been stored and sent.
	e.serveHandler(t, func(m *nats.Msg) { h(m); answered.Add(1) })
	// A fast side service on the same caller connection.
	if _, err := e.rnc.Subscribe("ping", shim.Handler(func(context.Context, *nats.Msg) ([]byte, error) {
		return []byte("pong"), nil
	}, shim.Conn(e.rnc))); err != nil {
		t.Fatal(err)
	}
	_ = e.rnc.Flush()
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst))
	const n = 9
	var wg sync.WaitGroup
	var ok, failed atomic.Int64
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Request(context.Background(), "svc", []byte("q"), shim.Timeout(time.Second)); err != nil {
				failed.Add(1)
			} else {
				ok.Add(1)
			}
		}()
		time.Sleep(5 * time.Millisecond) // the calls come one after another
	}
	wg.Wait()
	// Keep calling something else (every 200 ms) until the backlog has
	// drained: every reply stored and its reference sent.
	for answered.Load() < n {
		if _, err := c.Request(context.Background(), "ping", nil, shim.Timeout(time.Second)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Nothing is stored any more; keep calling until the caller has
	// deleted what the late references name.
	left := e.storedAfter(t, 30*time.Second, func() {
		_, _ = c.Request(context.Background(), "ping", nil, shim.Timeout(time.Second))
	})
	t.Logf("%d calls ok, %d failed; the handler ran %d times", ok.Load(), failed.Load(), ran.Load())
	if left != 0 {
		t.Fatalf("%d messages (chunks and meta) left in the bucket", left)
	}
}
