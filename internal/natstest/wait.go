package natstest

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// Eventually waits up to d for cond, polling every 5 ms, and fails tb
// naming what it waited for.
func Eventually(tb testing.TB, d time.Duration, cond func() bool, what string) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Reconnected waits until nc has reconnected since its reconnect count
// was before (nc.Stats().Reconnects, read before the server went away)
// and is connected. nc.IsConnected alone can be true before the client
// has noticed that its server went away.
func Reconnected(tb testing.TB, nc *nats.Conn, before uint64) {
	tb.Helper()
	Eventually(tb, 10*time.Second, func() bool { return nc.Stats().Reconnects > before && nc.IsConnected() }, "the reconnect")
}
