package main

import "sync"

// The type checks and the analyses share GOMAXPROCS slots. When both wait
// for a slot, an analysis goes first: it ends by dropping its package's
// syntax and type information, so the peak memory stays lower than if
// more packages were type-checked first; within each kind, first come,
// first served.

// Kinds of task; a free slot goes to the waiting task of the highest kind.
const (
	checking  = iota // a type check
	analyzing        // an analysis
	kinds
)

// slots is a counting semaphore with a first-in, first-out queue of
// waiters per kind of task.
type slots struct {
	mu   sync.Mutex
	free int
	wait [kinds][]chan struct{}
}

// newSlots returns n free slots.
func newSlots(n int) *slots { return &slots{free: n} }

// acquire waits for a slot, behind every waiting task of a higher kind
// and those of its kind that came first.
func (s *slots) acquire(kind int) {
	s.mu.Lock()
	if s.free > 0 {
		s.free--
		s.mu.Unlock()
		return
	}
	ready := make(chan struct{})
	s.wait[kind] = append(s.wait[kind], ready)
	s.mu.Unlock()
	<-ready
}

// release hands the slot to the first waiter of the highest kind, if any.
func (s *slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for kind := kinds - 1; kind >= 0; kind-- {
		if q := s.wait[kind]; len(q) > 0 {
			s.wait[kind] = q[1:]
			close(q[0])
			return
		}
	}
	s.free++
}
