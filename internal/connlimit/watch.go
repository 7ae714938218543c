package connlimit

import (
	"context"
	"sync"
	"sync/atomic"
)

// watches recycles Watch values: the request path makes one per call.
// A Watch is back in the pool only after Unwatch took it out of its
// State's set under the set's lock, and ends (end) happen under that lock
// too, so a recycled Watch is never ended for its previous call.
var watches = sync.Pool{New: func() any { return new(Watch) }}

// A Watch is one wait that the server's report of a permission violation
// ends (see State.Watch): WatchDenied's form for the request path, which
// makes no context of its own and, pooled, no allocation.
type Watch struct {
	pub    string // the publish subject watched
	inbox  string // the subscription pattern watched
	cancel context.CancelFunc
	denial atomic.Pointer[Denial]
}

// Watch registers a wait for a publish to pub (a subject without
// wildcards) or a subscription that the pattern inbox matches, which
// cancel ends when the server reports that it dropped the publish or
// refused the subscription, or at once when such a subscription was
// refused earlier on the same link (see WatchDenied). The sender calls it
// before it sends and Unwatch when its wait ends; Denial tells afterwards
// whether a violation ended it. On a connection whose error callback does
// not report to Denied (see Hook) it returns nil, which Unwatch and
// Denial accept.
func (s *State) Watch(pub, inbox string, cancel context.CancelFunc) *Watch {
	if !s.Hooked() {
		return nil
	}
	w := watches.Get().(*Watch)
	w.pub, w.inbox, w.cancel = pub, inbox, cancel
	w.denial.Store(nil)
	s.denied.mu.Lock()
	defer s.denied.mu.Unlock()
	if s.denied.calls == nil {
		s.denied.calls = make(map[*Watch]struct{})
	}
	s.denied.calls[w] = struct{}{}
	if refused := s.refusedLocked([]string{inbox}); refused != nil {
		w.end(refused)
	}
	return w
}

// Unwatch ends w's registration; w must not be used afterwards (read its
// Denial before).
func (s *State) Unwatch(w *Watch) {
	if w == nil {
		return
	}
	s.denied.mu.Lock()
	delete(s.denied.calls, w)
	s.denied.mu.Unlock()
	w.cancel = nil
	watches.Put(w)
}

// Denial returns the violation that ended w's wait, or nil.
func (w *Watch) Denial() *Denial {
	if w == nil {
		return nil
	}
	return w.denial.Load()
}

func (w *Watch) matches(d *Denial) bool {
	if d.Op == "subscribe" {
		return SubjectMatches(w.inbox, d.Subject)
	}
	return d.Subject == w.pub
}

// end ends w's wait with d; the State's denial lock is held.
func (w *Watch) end(d *Denial) {
	if w.denial.CompareAndSwap(nil, d) {
		w.cancel()
	}
}
