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
	e := newOverflowEnv(t)
	var ran atomic.Int64
	e.serveHandler(t, shim.Handler(func(ctx context.Context, _ *nats.Msg) ([]byte, error) {
		time.Sleep(900 * time.Millisecond)
		ran.Add(1)
		return payload(4*overflowLimit, 3), nil
	}, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc)))
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
		time.Sleep(5 * time.Millisecond)
	}
	wg.Wait()
	// Keep calling something else until the backlog has drained.
	for ran.Load() < n {
		if _, err := c.Request(context.Background(), "ping", nil, shim.Timeout(time.Second)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for i := 0; i < 10; i++ { // 2 s more for the last references and deletions
		_, _ = c.Request(context.Background(), "ping", nil, shim.Timeout(time.Second))
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("%d calls ok, %d failed; the handler ran %d times", ok.Load(), failed.Load(), ran.Load())
	if left := e.stored(t); left != 0 {
		t.Fatalf("%d messages (chunks and meta) left in the bucket", left)
	}
}
