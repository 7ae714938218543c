package connlimit

import (
	"context"
	"slices"
	"strings"
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
	sub    string // the subscription the wait needs
	cancel context.CancelFunc
	denial atomic.Pointer[Denial]
}

// Watch registers a wait for a publish to pub (a subject without
// wildcards) and for a reply on the subscription to sub (its exact
// subject), which cancel ends when the server reports that it dropped the
// publish or refused that subscription, or at once when that subscription
// was refused earlier on the same link (see RefusedSub). A refusal of any
// other subscription does not end it. The sender calls it before it sends
// and Unwatch when its wait ends; Denial tells afterwards whether a
// violation ended it. On a connection whose error callback does not report
// to Denied (see Hook) it returns nil, which Unwatch and Denial accept.
func (s *State) Watch(pub, sub string, cancel context.CancelFunc) *Watch {
	if !s.Hooked() {
		return nil
	}
	w := watches.Get().(*Watch)
	w.pub, w.sub, w.cancel = pub, sub, cancel
	w.denial.Store(nil)
	s.denied.mu.Lock()
	defer s.denied.mu.Unlock()
	if s.denied.calls == nil {
		s.denied.calls = make(map[*Watch]struct{})
	}
	s.denied.calls[w] = struct{}{}
	if refused := s.refusedLocked([]string{sub}); refused != nil {
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
		return d.Queue == "" && d.Subject == w.sub
	}
	return d.Subject == w.pub
}

// end ends w's wait with d; the State's denial lock is held.
func (w *Watch) end(d *Denial) {
	if w.denial.CompareAndSwap(nil, d) {
		w.cancel()
	}
}

// watchSet is one wait of WatchDenied: the publishes (patterns) and the
// subscriptions (exact subjects) it needs.
type watchSet struct {
	s      *State
	pubs   []string
	subs   []string // guarded by s.denied.mu
	cancel context.CancelCauseFunc
}

// watchKey is the context key of a WatchDenied wait (see NeedSub).
type watchKey struct{}

func (w *watchSet) matches(d *Denial) bool {
	if d.Op == "subscribe" {
		return d.Queue == "" && slices.Contains(w.subs, d.Subject)
	}
	return matchesAny(w.pubs, d.Subject)
}

// WatchDenied returns a context derived from ctx that is cancelled, with
// the *Denial as its cause (context.Cause), when the server reports a
// permission violation on the connection for an operation the caller is
// waiting on: a publish (or a message's reply subject) on a subject that
// one of pubs matches (NATS wildcards, as in a subscription), or the
// refusal of a subscription whose subject is exactly one of subs (the
// subscriptions the wait needs; NeedSub adds one made later). A refused
// subscription in subs that the server refused earlier on the same link
// ends it at once: nats.go does not subscribe again until it reconnects,
// so whatever waits on it would wait for nothing. The refusal of any other
// subscription ends nothing. The sender registers before it sends and
// calls stop when its wait ends. On a connection whose error callback does
// not report to Denied (see Hook) nothing is watched and ctx itself is
// returned.
func (s *State) WatchDenied(ctx context.Context, pubs, subs []string) (context.Context, context.CancelFunc) {
	if !s.Hooked() {
		return ctx, func() {}
	}
	wctx, cancel := context.WithCancelCause(ctx)
	w := &watchSet{s: s, pubs: pubs, subs: slices.Clone(subs), cancel: cancel}
	wctx = context.WithValue(wctx, watchKey{}, w)
	s.denied.mu.Lock()
	if s.denied.sets == nil {
		s.denied.sets = make(map[*watchSet]struct{})
	}
	s.denied.sets[w] = struct{}{}
	if refused := s.refusedLocked(w.subs); refused != nil {
		cancel(refused)
	}
	s.denied.mu.Unlock()
	return wctx, func() {
		s.denied.mu.Lock()
		delete(s.denied.sets, w)
		s.denied.mu.Unlock()
		cancel(context.Canceled)
	}
}

// NeedSub adds sub, the exact subject of a subscription made after the
// wait began (an attempt's own inbox), to the subscriptions that the
// WatchDenied wait ctx was made by (or derived from) needs: its refusal,
// reported already on this link or from now on, ends the wait. Without
// such a wait in ctx it does nothing.
func NeedSub(ctx context.Context, sub string) {
	w, _ := ctx.Value(watchKey{}).(*watchSet)
	if w == nil {
		return
	}
	s := w.s
	s.denied.mu.Lock()
	defer s.denied.mu.Unlock()
	if _, live := s.denied.sets[w]; !live {
		return
	}
	w.subs = append(w.subs, sub)
	if refused := s.refusedLocked([]string{sub}); refused != nil {
		w.cancel(refused)
	}
}

// RespInbox is the subject of nats.go's own response subscription on the
// connection (its request's "<inbox prefix>.<nuid>.*", made once and made
// again only on a reconnect): the subscription every nats.go request on
// the connection, JetStream's API calls among them, needs for its reply.
func (s *State) RespInbox() string {
	s.respOnce.Do(func() {
		in := s.nc.NewRespInbox() // initialises nats.go's response prefix; subscribes nothing
		s.respSub = in[:strings.LastIndexByte(in, '.')+1] + "*"
	})
	return s.respSub
}
