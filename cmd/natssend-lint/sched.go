package main

import (
	"container/heap"
	"sync"
)

// The type checks and the analyses share GOMAXPROCS slots. When both wait
// for a slot, an analysis goes first: it ends by dropping its package's
// syntax and type information, so the peak memory stays lower than if
// more packages were type-checked first; within each kind, first come,
// first served.

// Kinds of task, in the order they get a free slot.
const (
	checking  = iota // a type check
	analyzing        // an analysis
)

// slots is a counting semaphore that wakes the waiter of highest kind
// first, and among those the one that came first.
type slots struct {
	mu   sync.Mutex
	free int
	seq  int64
	wait waiters
}

// waiter is a task waiting for a slot.
type waiter struct {
	kind  int
	seq   int64
	ready chan struct{}
}

// waiters is a heap of waiters (container/heap.Interface), the first to
// wake on top.
type waiters []*waiter

func (w waiters) Len() int { return len(w) }
func (w waiters) Less(i, j int) bool {
	if w[i].kind != w[j].kind {
		return w[i].kind > w[j].kind
	}
	return w[i].seq < w[j].seq
}
func (w waiters) Swap(i, j int) { w[i], w[j] = w[j], w[i] }
func (w *waiters) Push(x any)   { *w = append(*w, x.(*waiter)) }
func (w *waiters) Pop() any {
	old := *w
	x := old[len(old)-1]
	*w = old[:len(old)-1]
	return x
}

// newSlots returns n free slots.
func newSlots(n int) *slots { return &slots{free: n} }

// acquire waits for a slot, behind every waiter of a higher kind and
// those of its kind that came first.
func (s *slots) acquire(kind int) {
	s.mu.Lock()
	if s.free > 0 {
		s.free--
		s.mu.Unlock()
		return
	}
	s.seq++
	w := &waiter{kind: kind, seq: s.seq, ready: make(chan struct{})}
	heap.Push(&s.wait, w)
	s.mu.Unlock()
	<-w.ready
}

// release hands the slot to the first waiter, if any.
func (s *slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wait.Len() > 0 {
		close(heap.Pop(&s.wait).(*waiter).ready)
		return
	}
	s.free++
}
