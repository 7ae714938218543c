package natstest

import (
	"testing"
	"time"
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
