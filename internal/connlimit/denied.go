package connlimit

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// A Denial is a permission violation the server reported on a connection:
// it dropped a publish (Op "publish", also for a reply subject it does not
// allow: Op "reply") or refused a subscription (Op "subscribe"). The
// server says so only through the connection's asynchronous error
// callback; nothing fails at the send.
type Denial struct {
	Op      string // "publish", "reply" or "subscribe"
	Subject string
	Queue   string // the queue group of a refused queue subscription
	Err     error  // nats.go's error: errors.Is(Err, nats.ErrPermissionViolation)
}

// Error describes the denial, naming the operation and the subject.
func (d *Denial) Error() string {
	switch d.Op {
	case "subscribe":
		if d.Queue != "" {
			return fmt.Sprintf("permission denied: the server refused the subscription to %q in queue group %q", d.Subject, d.Queue)
		}
		return fmt.Sprintf("permission denied: the server refused the subscription to %q", d.Subject)
	case "reply":
		return fmt.Sprintf("permission denied: the server dropped a message with the reply subject %q", d.Subject)
	}
	return fmt.Sprintf("permission denied: the server dropped a publish to %q", d.Subject)
}

// Unwrap returns nats.go's error, so errors.Is sees nats.ErrPermissionViolation.
func (d *Denial) Unwrap() error { return d.Err }

// denials is a State's set of watchers of permission violations.
type denials struct {
	mu       sync.Mutex
	next     int
	watchers map[int]func(*Denial)
	hooked   bool // the connection's error callback reports to Denied
	// subs are the subscriptions the server refused on the current link
	// (link): they stay refused until nats.go subscribes again after a
	// reconnect, so a later wait that needs one fails at once (see
	// WatchDenied). At most maxRefusedSubs, the newest kept.
	subs []*Denial
	link uint64
	// calls are the waits of Watch, the request path's cheap form;
	// sets those of WatchDenied.
	calls map[*Watch]struct{}
	sets  map[*watchSet]struct{}
}

// maxRefusedSubs bounds the refused subscriptions a State remembers.
const maxRefusedSubs = 32

// Hook marks the connection's asynchronous error callback as reporting to
// Denied (shim.Connect installs it): WatchDenied then ends a wait at a
// denial. Without it WatchDenied watches nothing.
func (s *State) Hook() {
	s.denied.mu.Lock()
	s.denied.hooked = true
	s.denied.mu.Unlock()
}

// Hooked reports whether the connection's error callback reports to Denied.
func (s *State) Hooked() bool {
	s.denied.mu.Lock()
	defer s.denied.mu.Unlock()
	return s.denied.hooked
}

// Denied passes a permission violation the server reported on the
// connection to every watcher (see WatchDenied).
func (s *State) Denied(d *Denial) {
	s.denied.mu.Lock()
	if d.Op == "subscribe" {
		s.rememberLocked(d)
	}
	ws := make([]func(*Denial), 0, len(s.denied.watchers))
	for _, w := range s.denied.watchers {
		ws = append(ws, w)
	}
	for w := range s.denied.calls {
		if w.matches(d) {
			w.end(d) // under the lock: see watches
		}
	}
	for w := range s.denied.sets {
		if w.matches(d) {
			w.cancel(d)
		}
	}
	s.denied.mu.Unlock()
	for _, w := range ws {
		w(d)
	}
}

// rememberLocked records a refused subscription of the current link.
func (s *State) rememberLocked(d *Denial) {
	if link := s.Link(); link != s.denied.link {
		s.denied.subs, s.denied.link = nil, link
	}
	for _, old := range s.denied.subs {
		if old.Subject == d.Subject && old.Queue == d.Queue {
			return
		}
	}
	if len(s.denied.subs) == maxRefusedSubs {
		s.denied.subs = s.denied.subs[1:]
	}
	s.denied.subs = append(s.denied.subs, d)
}

// refusedLocked returns a subscription refused on the current link whose
// subject is one of subs (a plain subscription, not a queue group's), or
// nil. Only the exact subscription counts: a refusal of another
// subscription, however its subject compares, ends no wait that does not
// need it.
func (s *State) refusedLocked(subs []string) *Denial {
	if len(s.denied.subs) == 0 || s.denied.link != s.Link() {
		return nil
	}
	for _, d := range s.denied.subs {
		if d.Queue == "" && slices.Contains(subs, d.Subject) {
			return d
		}
	}
	return nil
}

// RefusedSub returns the refusal, on the connection's current link, of the
// plain subscription to subject, or nil: nats.go keeps such a
// subscription as if it were made, so whatever waits on it waits for
// nothing until it is made again (a new subscription, which the server
// decides anew: after a configuration reload granted it, say).
func (s *State) RefusedSub(subject string) *Denial {
	s.denied.mu.Lock()
	defer s.denied.mu.Unlock()
	return s.refusedLocked([]string{subject})
}

func matchesAny(patterns []string, subject string) bool {
	for _, p := range patterns {
		if SubjectMatches(p, subject) {
			return true
		}
	}
	return false
}

// Listen calls f with every permission violation the server reports on
// the connection from now on, until stop is called (on a connection whose
// error callback does not report to Denied, see Hook, never). f runs on
// nats.go's callback goroutine: it must not block.
func (s *State) Listen(f func(*Denial)) (stop func()) {
	if !s.Hooked() {
		return func() {}
	}
	s.denied.mu.Lock()
	if s.denied.watchers == nil {
		s.denied.watchers = make(map[int]func(*Denial))
	}
	id := s.denied.next
	s.denied.next++
	s.denied.watchers[id] = f
	s.denied.mu.Unlock()
	return func() {
		s.denied.mu.Lock()
		delete(s.denied.watchers, id)
		s.denied.mu.Unlock()
	}
}

// DeniedCause returns the *Denial that ended ctx, made by WatchDenied, or
// nil when ctx did not end for a permission violation.
func DeniedCause(ctx context.Context) *Denial {
	var d *Denial
	if errors.As(context.Cause(ctx), &d) {
		return d
	}
	return nil
}

// SubjectMatches reports whether subject is matched by pattern, a subject
// that may hold the wildcards * (one token) and > (one or more tokens at
// the end). A subject that holds wildcards itself (a refused wildcard
// subscription) matches a pattern that covers it token by token.
func SubjectMatches(pattern, subject string) bool {
	pt := strings.Split(pattern, ".")
	st := strings.Split(subject, ".")
	for i, p := range pt {
		if p == ">" {
			return len(st) > i
		}
		if i >= len(st) {
			return false
		}
		if p != "*" && p != st[i] {
			return false
		}
	}
	return len(pt) == len(st)
}

// Subscribe makes a subscription with subscribe and, on a connection whose
// error callback reports to Denied (see Hook), waits one round trip (a
// flush, bounded by timeout) for the server's verdict on it: a refused
// subscription is unsubscribed and its *Denial returned, so that serving
// on a subject the user may not subscribe to fails where it is set up
// instead of waiting for requests that never come; the refusal is
// remembered on the link at once (see RefusedSub). When the round trip
// fails the verdict is not known and the subscription is returned: its
// refusal, if any, still reaches the watchers (WatchDenied).
func (s *State) Subscribe(timeout time.Duration, subscribe func() (*nats.Subscription, error)) (*nats.Subscription, error) {
	if !s.Hooked() {
		return subscribe()
	}
	prev := s.nc.LastError()
	sub, err := subscribe()
	if err != nil {
		return nil, err
	}
	if d := s.Verdict(timeout, prev, func(d *Denial) bool {
		return d.Op == "subscribe" && d.Subject == sub.Subject && d.Queue == sub.Queue
	}); d != nil {
		_ = sub.Unsubscribe()
		// Remembered now, not only when the error callback reports it:
		// a wait that registers for it next ends at once (RefusedSub).
		s.denied.mu.Lock()
		s.rememberLocked(d)
		s.denied.mu.Unlock()
		return nil, d
	}
	return sub, nil
}

// Verdict waits one round trip (a flush, bounded by timeout) after a
// publish or subscription the server may refuse, and returns the refusal
// that match accepts, or nil. prev is the connection's last error before
// the operation (nc.LastError()): nats.go records a refusal as the
// connection's last error when it reads it, before the flush's answer, so
// no wait beyond the round trip is needed, whereas the asynchronous error
// callback may run later. When the round trip fails the verdict is not
// known (nil): the refusal, if any, still reaches the watchers. On a
// connection that does not report violations (see Hook) it returns nil
// without a round trip.
func (s *State) Verdict(timeout time.Duration, prev error, match func(*Denial) bool) *Denial {
	if !s.Hooked() {
		return nil
	}
	if err := s.nc.FlushTimeout(timeout); err != nil {
		return nil
	}
	last := s.nc.LastError()
	if last == nil || sameError(last, prev) {
		return nil
	}
	if d := ParseDenial(last); d != nil && match(d) {
		return d
	}
	return nil
}

// sameError reports whether a and b are the same error value, without
// comparing values whose type is not comparable (which would panic).
func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}
