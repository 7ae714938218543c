package faultmatrix_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/internal/objstore"
	"github.com/natssend/natssend/shim"
)

// The claim-check read path of an RPC on a starved host: the rows of
// issue 46. Not parallel: the spinning goroutines take the whole
// process's CPU, and the re-asks are counted for the process.

// envInt returns the environment variable name as a number (at least 0),
// or def when it is not set.
func envInt(tb testing.TB, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		tb.Fatalf("%s=%q: want a number", name, s)
	}
	return n
}

// TestStarvedClaimCheckedRPC: many claim-checked calls at once, request
// and reply each above the limit, served by as many workers, with spinning goroutines taking two
// thirds of the process's CPU and both connections taking in one chunk
// reply per 20 ms (a proxy holds each; NATSSEND_STARVED_PACE_MS, 0 for
// none), so that what each Store's reads ask for at once takes longer
// than the 2 s stall check to arrive. Every
// call succeeds within its deadline, the handler runs once per call,
// batches are rarely given up and asked for again (at most one per four
// reads), and nothing is left in the bucket. make starved runs the
// issue's 50 calls of 2 MiB each way on a third of one core
// (GOMAXPROCS=1, -race).
func TestStarvedClaimCheckedRPC(t *testing.T) {
	calls := envInt(t, "NATSSEND_STARVED_READS", 16)
	size := envInt(t, "NATSSEND_STARVED_SIZE", 1<<20)
	const maxPayload = 64 << 10
	s := natstest.Start(t, natstest.MaxPayload(maxPayload), natstest.JetStream())
	admin := dial(t, s.URL())
	ast := store(t, admin)
	cp, rp := s.Proxy(t), s.Proxy(t)
	caller, resp := dial(t, cp.URL()), dial(t, rp.URL())
	cst, rst := store(t, caller), store(t, resp)

	var runs atomic.Int64
	h := shim.Handler(func(_ context.Context, m *nats.Msg) ([]byte, error) {
		runs.Add(1)
		out := make([]byte, len(m.Data))
		for i, b := range m.Data {
			out[len(out)-1-i] = b // the request reversed: a mix-up shows
		}
		return out, nil
	}, shim.ServeClaimChecks(rst), shim.Conn(resp))
	for range calls {
		// A worker per call, each a queue subscription of its own (a
		// subscription runs its handler one request at a time).
		if _, err := resp.QueueSubscribe(subject, "q", h); err != nil {
			t.Fatal(err)
		}
	}
	if err := resp.Flush(); err != nil {
		t.Fatal(err)
	}
	client := shim.NewClient(caller, shim.WithClaimChecks(cst), shim.WithTimeout(3*time.Minute))

	if pace := time.Duration(envInt(t, "NATSSEND_STARVED_PACE_MS", 20)) * time.Millisecond; pace > 0 {
		for _, p := range []*natstest.Proxy{cp, rp} {
			p.On(natstest.Rule{Dir: natstest.ToClient, Every: true, Action: natstest.Delay, Delay: pace,
				Match: func(f natstest.Frame) bool { return f.HasHeader("Nats-Subject") && len(f.Data) > 1024 }})
		}
	}
	natstest.Starve(t, envInt(t, "NATSSEND_STARVED_SPIN", 2*runtime.GOMAXPROCS(0)))
	before := objstore.Totals()
	start := time.Now()
	var wg sync.WaitGroup
	var failed atomic.Int64
	for i := range calls {
		wg.Go(func() {
			req := payload(size, uint64(1000+i))
			reply, err := client.Request(context.Background(), subject, req)
			if err != nil {
				failed.Add(1)
				t.Errorf("call %d: %v", i, err)
				return
			}
			for j := range req {
				if reply.Data[len(req)-1-j] != req[j] {
					t.Errorf("call %d: the reply is not its request's", i)
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	after := objstore.Totals()
	lost := after.Lost - before.Lost
	t.Logf("%d calls of %d bytes each way in %v: %d failed, handler ran %d times; %d read requests, %d batches given up and asked for again",
		calls, size, took, failed.Load(), runs.Load(), after.Requests-before.Requests, lost)
	if runs.Load() != int64(calls) {
		t.Errorf("the handler ran %d times, want %d", runs.Load(), calls)
	}
	if reads := 2 * calls; lost > uint64(reads/4) {
		t.Errorf("%d batches given up for %d reads; want at most %d", lost, reads, reads/4)
	}
	checkLeftIn(t, ast, 0)
}
