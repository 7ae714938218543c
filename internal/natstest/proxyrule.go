package natstest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Point says when a Rule acts, relative to forwarding its frame.
type Point int

const (
	// Before acts before the frame is forwarded: a Cut or Drop means the
	// other side never sees it (for a reply to the client: the reply is
	// lost).
	Before Point = iota
	// After acts once the frame is forwarded. For a frame to the server,
	// the proxy first makes sure the server has processed it: it sends a
	// PING of its own after the frame and waits for the PONG (which the
	// client never sees), so a Cut after a PUB means the server had the
	// message.
	After
)

// Action is what a Rule does at its point.
type Action int

const (
	// Pass forwards the frame; only the Hook runs.
	Pass Action = iota
	// Cut cuts the link abruptly in both directions (TCP reset on both
	// sides), after flushing what came before the frame. The client may
	// reconnect through the proxy.
	Cut
	// Drop does not forward the frame and keeps the link (frame loss).
	// Only with Before.
	Drop
	// Delay holds the frame (Before) or the direction after it (After)
	// for Rule.Delay: nothing else in that direction of the link passes
	// meanwhile.
	Delay
)

// Rule says where a Proxy acts and what it does there. The zero Rule
// matches the first message (PUB, HPUB, MSG or HMSG) in either direction
// and only fires its Trigger.
type Rule struct {
	Dir     Dir    // the direction; 0 for both
	Op      string // the operation ("PUB", "MSG", "PING", "SUB"...); "" for any message
	Subject string // a subject pattern with * and >; "" for any
	// Match adds conditions on the frame (nil for none). It runs under
	// the proxy's lock: it must not call the Proxy.
	Match  func(Frame) bool
	Link   int           // only on this link (see Frame.Link); 0 for any
	Nth    int           // fire on the Nth matching frame (1-based; 0 means 1)
	Every  bool          // fire on the Nth and on every later match, not once
	When   Point         // Before or After forwarding
	Action Action        // what to do
	Delay  time.Duration // for Delay
	// Hook runs at the rule's point, in the link's forwarding goroutine,
	// before the Action: nothing more passes in that direction of the link
	// until it returns, so it can restart the server, cancel a context,
	// cut another proxy, or block to stall the link. It must not wait for
	// traffic in the same direction of the same link. Close waits for
	// running hooks to return.
	Hook func(Frame)
}

func (r *Rule) matches(f Frame) bool {
	if r.Dir != 0 && r.Dir != f.Dir {
		return false
	}
	if r.Link != 0 && r.Link != f.Link {
		return false
	}
	if r.Op == "" {
		if !f.IsMsg() {
			return false
		}
	} else if r.Op != f.Op {
		return false
	}
	if !subjectMatch(r.Subject, f.Subject) {
		return false
	}
	return r.Match == nil || r.Match(f)
}

// Trigger reports when a Rule fired.
type Trigger struct {
	rule  Rule
	seen  int // matching frames so far; under the proxy's lock
	done  bool
	n     atomic.Int64
	once  sync.Once
	fired chan struct{}
	mu    sync.Mutex
	first Frame
}

func newTrigger(r Rule) *Trigger {
	if r.Nth < 1 {
		r.Nth = 1
	}
	return &Trigger{rule: r, fired: make(chan struct{})}
}

// fire records a firing; f's slices are copied.
func (t *Trigger) fire(f Frame) {
	t.n.Add(1)
	t.once.Do(func() {
		f.Header = append([]byte(nil), f.Header...)
		f.Data = append([]byte(nil), f.Data...)
		t.mu.Lock()
		t.first = f
		t.mu.Unlock()
		close(t.fired)
	})
}

// Fired is closed when the rule fired the first time, after its Hook and
// Action.
func (t *Trigger) Fired() <-chan struct{} { return t.fired }

// Count returns how often the rule fired.
func (t *Trigger) Count() int { return int(t.n.Load()) }

// Frame returns (a copy of) the frame the rule first fired on, or the
// zero Frame before it fired.
func (t *Trigger) Frame() Frame {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.first
}

// Wait waits up to d for the rule to fire and fails tb if it does not.
func (t *Trigger) Wait(tb testing.TB, d time.Duration) Frame {
	tb.Helper()
	select {
	case <-t.fired:
		return t.Frame()
	case <-time.After(d):
		tb.Fatalf("natstest: proxy rule %+v did not fire within %v", t.rule, d)
		return Frame{}
	}
}

// byteRule cuts a direction after a number of bytes.
type byteRule struct {
	dir  Dir
	left int64
	hook func()
	t    *Trigger
}
