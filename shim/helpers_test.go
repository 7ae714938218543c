package shim_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

func connect(t testing.TB, url string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	opts = append([]nats.Option{nats.ReconnectWait(20 * time.Millisecond)}, opts...)
	nc, err := shim.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// serve subscribes h on subject with a fresh connection and returns it.
func serve(t testing.TB, s *natstest.Server, subject string, h nats.MsgHandler) *nats.Conn {
	t.Helper()
	nc := connect(t, s.URL())
	if _, err := nc.Subscribe(subject, h); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return nc
}

// counter counts deliveries.
type counter struct{ n atomic.Int64 }

func (c *counter) inc()       { c.n.Add(1) }
func (c *counter) get() int64 { return c.n.Load() }

// stays checks that cond holds for the whole of d.
func stays(t testing.TB, d time.Duration, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !cond() {
			t.Fatalf("%s no longer holds", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// lateInfo is natstest's INFO-delaying dialer holding each INFO after the
// first until just before the next PONG, and that PONG for delay.
func lateInfo(delay time.Duration) *natstest.InfoGate {
	return &natstest.InfoGate{UntilPong: true, PongDelay: delay}
}
