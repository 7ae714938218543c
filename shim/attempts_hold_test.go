package shim_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// TestAttemptsRepeatErrorWaitsForFirst: an operation-ID-aware responder: the first delivery of an ID does the
// work (slowly, 500 ms) and succeeds; a repeat that arrives while the
// first is still running fails fast with a transient error (as a
// serializable transaction conflicting on the ID's unique key would).
// One attempt completes within the 3 s deadline; Attempts(2) with
// AttemptTimeout(100ms) sends a repeat, and the repeat's error ends the
// call although attempt 1's reply arrives within the deadline ("A slow
// responder still answers the call: its reply to the first attempt is
// taken whenever it comes within the deadline"; "So Attempts never fails
// a call that one attempt would have completed within the same deadline").
func TestAttemptsRepeatErrorWaitsForFirst(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	var mu sync.Mutex
	running := map[string]bool{}
	h := func(rnc *nats.Conn) nats.MsgHandler {
		return shim.Handler(func(ctx context.Context, m *nats.Msg) ([]byte, error) {
			id := shim.OperationIDFrom(ctx)
			mu.Lock()
			busy := running[id]
			running[id] = true
			mu.Unlock()
			if busy {
				return nil, errors.New("could not serialize access: concurrent operation on the same ID")
			}
			time.Sleep(500 * time.Millisecond) // the slow work of the first delivery
			return []byte("done"), nil
		}, shim.Conn(rnc))
	}
	// One subscription serving each request on a goroutine of its own
	// (as a worker pool does).
	rnc := connect(t, s.URL())
	hh := h(rnc)
	if _, err := rnc.Subscribe("svc", func(m *nats.Msg) { go hh(m) }); err != nil {
		t.Fatal(err)
	}
	_ = rnc.Flush()
	c := shim.NewClient(connect(t, s.URL()))
	// Baseline: one attempt.
	reply, err := c.Request(context.Background(), "svc", nil, shim.OperationID("op-1"), shim.Timeout(3*time.Second))
	if err != nil {
		t.Fatalf("one attempt: %v", err)
	}
	t.Logf("one attempt: %q", reply.Data)
	start := time.Now()
	reply, err = c.Request(context.Background(), "svc", nil, shim.OperationID("op-2"), shim.Attempts(2),
		shim.AttemptTimeout(100*time.Millisecond), shim.Timeout(3*time.Second))
	if err != nil {
		t.Fatalf("Attempts(2) failed after %v where one attempt succeeds: %v (%v)", time.Since(start), err, shim.Classify(err))
	}
	t.Logf("Attempts(2): %q after %v", reply.Data, time.Since(start))
}
