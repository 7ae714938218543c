package main

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// queued waits until s has n waiters of kind.
func queued(t *testing.T, s *slots, kind, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		got := len(s.wait[kind])
		s.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d waiters of kind %d, want %d", got, kind, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestSlotsOrder: a freed slot goes to the waiting analyses first, then
// to the type checks, each kind in the order it came.
func TestSlotsOrder(t *testing.T) {
	s := newSlots(1)
	s.acquire(checking) // the one slot, held
	order := make(chan string, 4)
	var wg sync.WaitGroup
	enqueue := func(name string, kind, before int) {
		wg.Go(func() {
			s.acquire(kind)
			order <- name
			s.release()
		})
		queued(t, s, kind, before+1)
	}
	enqueue("check1", checking, 0)
	enqueue("analyze1", analyzing, 0)
	enqueue("check2", checking, 1)
	enqueue("analyze2", analyzing, 1)
	s.release()
	wg.Wait()
	close(order)
	var got []string
	for name := range order {
		got = append(got, name)
	}
	want := []string{"analyze1", "analyze2", "check1", "check2"}
	if len(got) != len(want) {
		t.Fatalf("granted %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("granted %v, want %v", got, want)
		}
	}
	if s.free != 1 {
		t.Fatalf("%d free slots after every release, want 1", s.free)
	}
}

// TestSlotsBound: many tasks of both kinds never hold more than n slots
// at once, and every one of them gets a slot.
func TestSlotsBound(t *testing.T) {
	for _, n := range []int{1, 2, 3} {
		s := newSlots(n)
		var held, peak, done atomic.Int64
		var wg sync.WaitGroup
		const tasks = 200
		for i := range tasks {
			wg.Go(func() {
				s.acquire(i % kinds)
				h := held.Add(1)
				for {
					p := peak.Load()
					if h <= p || peak.CompareAndSwap(p, h) {
						break
					}
				}
				if i%7 == 0 {
					time.Sleep(100 * time.Microsecond) // some tasks hold their slot a while
				}
				held.Add(-1)
				done.Add(1)
				s.release()
			})
		}
		wg.Wait()
		if got := done.Load(); got != tasks {
			t.Fatalf("n=%d: %d of %d tasks ran", n, got, tasks)
		}
		if p := peak.Load(); p > int64(n) {
			t.Fatalf("n=%d: %d slots held at once", n, p)
		}
		if s.free != n {
			t.Fatalf("n=%d: %d free slots at the end", n, s.free)
		}
	}
}
