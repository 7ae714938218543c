package connlimit

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

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

var (
	deniedPubRe   = regexp.MustCompile(`(?i)permissions violation for publish to "([^"]*)"`)
	deniedReplyRe = regexp.MustCompile(`(?i)permissions violation for publish with reply of "([^"]*)"`)
	deniedSubRe   = regexp.MustCompile(`(?i)permissions violation for subscription to "([^"]*)"(?: using queue "([^"]*)")?`)
)

// ParseDenial returns the Denial that err, an error nats.go passed to the
// asynchronous error callback, reports, or nil when it reports none.
func ParseDenial(err error) *Denial {
	if err == nil || !errors.Is(err, nats.ErrPermissionViolation) {
		return nil
	}
	text := err.Error()
	if m := deniedReplyRe.FindStringSubmatch(text); m != nil {
		return &Denial{Op: "reply", Subject: m[1], Err: err}
	}
	if m := deniedPubRe.FindStringSubmatch(text); m != nil {
		return &Denial{Op: "publish", Subject: m[1], Err: err}
	}
	if m := deniedSubRe.FindStringSubmatch(text); m != nil {
		return &Denial{Op: "subscribe", Subject: m[1], Queue: m[2], Err: err}
	}
	return nil
}

// denials is a State's set of watchers of permission violations.
type denials struct {
	mu       sync.Mutex
	next     int
	watchers map[int]func(*Denial)
	hooked   bool // the connection's error callback reports to Denied
}

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
	ws := make([]func(*Denial), 0, len(s.denied.watchers))
	for _, w := range s.denied.watchers {
		ws = append(ws, w)
	}
	s.denied.mu.Unlock()
	for _, w := range ws {
		w(d)
	}
}

// WatchDenied returns a context derived from ctx that is cancelled, with
// the *Denial as its cause (context.Cause), when the server reports a
// permission violation on the connection for an operation the caller is
// waiting on: a publish (or a message's reply subject) on a subject that
// one of pubs matches, or a subscription to a subject that one of subs
// matches (NATS wildcards, as in a subscription). The sender registers
// before it sends and calls stop when its wait ends. On a connection whose
// error callback does not report to Denied (see Hook) nothing is watched.
func (s *State) WatchDenied(ctx context.Context, pubs, subs []string) (context.Context, context.CancelFunc) {
	wctx, cancel := context.WithCancelCause(ctx)
	if !s.Hooked() {
		return wctx, func() { cancel(context.Canceled) }
	}
	s.denied.mu.Lock()
	if s.denied.watchers == nil {
		s.denied.watchers = make(map[int]func(*Denial))
	}
	id := s.denied.next
	s.denied.next++
	s.denied.watchers[id] = func(d *Denial) {
		patterns := pubs
		if d.Op == "subscribe" {
			patterns = subs
		}
		for _, p := range patterns {
			if SubjectMatches(p, d.Subject) {
				cancel(d)
				return
			}
		}
	}
	s.denied.mu.Unlock()
	return wctx, func() {
		s.denied.mu.Lock()
		delete(s.denied.watchers, id)
		s.denied.mu.Unlock()
		cancel(context.Canceled)
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
