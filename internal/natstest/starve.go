package natstest

import (
	"sync"
	"testing"
)

// Starve runs n goroutines that spin until tb ends: everything in the
// process (the code under test, nats.go, an embedded server) competes
// with them for GOMAXPROCS, as on a host that gives the process a
// fraction of a core (2*GOMAXPROCS spinners leave it a third).
func Starve(tb testing.TB, n int) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			x := 0
			for {
				select {
				case <-stop:
					return
				default:
				}
				for i := range 1 << 14 {
					x += i
				}
			}
		})
	}
	tb.Cleanup(func() { close(stop); wg.Wait() })
}
