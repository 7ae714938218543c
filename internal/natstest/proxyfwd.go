package natstest

import (
	"bufio"
	"time"
)

// syncTimeout bounds the wait for the server's PONG to the proxy's own
// PING (Rule.When After on a frame to the server).
const syncTimeout = 10 * time.Second

// fwd writes one direction of a link and applies the proxy's rules.
type fwd struct {
	l   *link
	dir Dir
	bw  *bufio.Writer
	err error
}

// firing returns the rules that fire on f, counting f for every rule it
// matches.
func (w *fwd) firing(f Frame) (before, after []*Trigger) {
	p := w.l.p
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range p.rules {
		if t.done || !t.rule.matches(f) {
			continue
		}
		t.seen++
		if t.seen < t.rule.Nth {
			continue
		}
		if !t.rule.Every {
			t.done = true
		}
		if t.rule.When == After {
			after = append(after, t)
		} else {
			before = append(before, t)
		}
	}
	return before, after
}

// frame forwards f (its line and payload with CRLF) unless a rule says
// otherwise. It returns false when the link is to be cut.
func (w *fwd) frame(f Frame, line, payload []byte) bool {
	before, after := w.firing(f)
	if len(before) > 0 {
		if !w.flush() {
			return false
		}
		act := w.act(f, before)
		switch act {
		case Cut:
			return false
		case Drop:
			return true
		}
	}
	if !w.write(line) || !w.write(payload) {
		return false
	}
	if len(after) == 0 {
		return true
	}
	if !w.flush() || !w.sync() {
		return false
	}
	return w.act(f, after) != Cut
}

// act runs the hooks of ts, then the strongest action among them, and
// fires the triggers. It returns the action taken.
func (w *fwd) act(f Frame, ts []*Trigger) Action {
	act := Pass
	var delay time.Duration
	for _, t := range ts {
		if t.rule.Hook != nil {
			t.rule.Hook(f)
		}
		switch a := t.rule.Action; {
		case a == Cut:
			act = Cut
		case a == Drop && act != Cut && t.rule.When == Before:
			act = Drop
		case a == Delay && act == Pass:
			act, delay = Delay, max(delay, t.rule.Delay)
		}
	}
	switch act {
	case Cut:
		w.l.cut()
	case Delay:
		select {
		case <-time.After(delay):
		case <-w.l.done:
		}
	}
	for _, t := range ts {
		t.fire(f)
	}
	return act
}

// sync makes sure the server has processed everything forwarded so far:
// a PING of the proxy's own and its PONG. A no-op towards the client.
func (w *fwd) sync() bool {
	if w.dir != ToServer {
		return true
	}
	ch := make(chan struct{})
	w.l.pushPing(ch)
	if !w.write([]byte("PING\r\n")) || !w.flush() {
		return false
	}
	select {
	case <-ch:
		return true
	case <-w.l.done:
		return false
	case <-time.After(syncTimeout):
		return false
	}
}

// write forwards b, applying the proxy's byte rules: when one runs out
// within b, only its share is forwarded, flushed, and the link is cut.
func (w *fwd) write(b []byte) bool {
	if w.err != nil {
		return false
	}
	if len(b) == 0 {
		return true
	}
	p := w.l.p
	p.mu.Lock()
	var hit *byteRule
	for i, r := range p.bytes {
		if r.dir != w.dir {
			continue
		}
		if int64(len(b)) >= r.left {
			hit = r
			p.bytes = append(p.bytes[:i:i], p.bytes[i+1:]...)
			break
		}
	}
	n := len(b)
	if hit != nil {
		n = int(hit.left)
	}
	for _, r := range p.bytes {
		if r.dir == w.dir {
			r.left -= int64(n)
		}
	}
	p.mu.Unlock()
	if _, w.err = w.bw.Write(b[:n]); w.err != nil {
		return false
	}
	if hit == nil {
		return true
	}
	w.flush()
	if hit.hook != nil {
		hit.hook()
	}
	w.l.cut()
	hit.t.fire(Frame{Link: w.l.id, Dir: w.dir})
	return false
}

// flush writes out what is buffered.
func (w *fwd) flush() bool {
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	return w.err == nil
}
