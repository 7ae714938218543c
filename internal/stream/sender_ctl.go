package stream

import (
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/callerr"
	"github.com/natssend/natssend/internal/xfer"
)

// The responder's side of flow control and liveness: the caller's
// credit, acknowledgements, resend requests and cancel, and heartbeats.

// onCtl handles the caller's control messages. One the protocol rules
// out (a grant beyond the window the caller declared, an acknowledgement
// of bytes never sent, a final acknowledgement before the end, a message
// of no known kind) breaks the stream at once; only valid ones count as
// the caller's sign of life.
func (s *Sender) onCtl(m *nats.Msg) {
	at := time.Now() // before the lock: a writer holding it does not lengthen a round trip
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.cond.Broadcast()
	if callerr.IsNoResponders(m) {
		// The caller's inbox is gone: it left, or it is reconnecting (also
		// after the end frame went out, before its final ack). Keep the
		// unacknowledged frames for idle/2, for it to ask again; the
		// heartbeat loop gives up after that (ErrCallerGone).
		if s.goneAt.IsZero() {
			s.goneAt = time.Now()
		}
		return
	}
	if s.failErr != nil {
		return
	}
	if bad := s.ctlLocked(m.Data, at); bad != "" {
		s.brokeLocked(bad)
		return
	}
	s.lastCtl = time.Now()
	s.goneAt = time.Time{}
}

// ctlLocked applies one control message, received at at, and returns
// what makes it break the protocol (xfer.Sender.ParseCtl), or "".
func (s *Sender) ctlLocked(b []byte, at time.Time) string {
	c, bad := (xfer.Sender{Window: s.window, Sent: s.sent, Ended: s.ended}).ParseCtl(b)
	if bad != "" {
		return bad
	}
	switch c.Kind {
	case xfer.Ack:
		if s.start != nil && c.Recv == 0 && !s.startAt.IsZero() {
			// The caller's acknowledgement of the start frame: the
			// round trip of a small message, the path's own (a data
			// frame's includes its size and whatever is ahead of it).
			s.sampleRTTLocked(at.Sub(s.startAt))
		}
		s.start = nil
		s.granted = max(s.granted, c.Grant)
		if c.Recv > s.acked {
			s.acked = c.Recv
			s.releaseLocked(at)
		}
		s.final = s.final || c.Final
	case xfer.Resend:
		s.resendLocked(c.From, c.Start)
	case xfer.Cancel:
		if c.Broken {
			// The caller found the stream broken (a frame the rules
			// refuse, a digest mismatch): the handler learns why.
			s.cancel(ErrProtocol)
		} else {
			s.cancel(ErrCanceled)
		}
	}
	return ""
}

// brokeLocked ends the stream because the caller broke the protocol: the
// handler's context ends (ErrProtocol), Write fails, nothing more is
// sent and the unacknowledged frames are dropped.
func (s *Sender) brokeLocked(what string) {
	s.failErr = brokenError("the caller broke the stream protocol: "+what, ErrProtocol)
	s.cancel(ErrProtocol)
	s.frames, s.free, s.buf, s.start = nil, nil, nil, nil
}

// releaseLocked drops the frames the caller has received, keeping their
// buffers for the next frames (filled again once the digest is done with
// them).
func (s *Sender) releaseLocked(at time.Time) {
	i := 0
	for i < len(s.frames) && s.frames[i].body[0] == xfer.Data && s.frames[i].end() <= s.acked {
		s.sampleLocked(&s.frames[i], at)
		// As many spare buffers as the credit can fill (at least 4): a
		// wide window reuses its frames' buffers instead of allocating
		// (and zeroing) one per frame. They were all in flight at once,
		// so the spares never hold more than the window did.
		if keep := max(4, (s.granted-s.acked)/int64(cap(s.frames[i].body))+1); int64(len(s.free)) < keep {
			s.free = append(s.free, spareBuf{body: s.frames[i].body, end: s.frames[i].end()})
		}
		s.frames[i] = outFrame{}
		i++
	}
	s.frames = s.frames[i:]
}

// sampleLocked takes a round-trip sample from f, a frame the caller has
// just acknowledged, sent when little of the stream was in transit ahead
// of it: the least one is the path's round trip (a frame acknowledged
// late, or sent again, only gives a larger sample).
func (s *Sender) sampleLocked(f *outFrame, at time.Time) {
	if f.at.IsZero() {
		return
	}
	s.sampleRTTLocked(at.Sub(f.at))
}

// sampleRTTLocked takes d as a round trip of the path: the least is kept.
func (s *Sender) sampleRTTLocked(d time.Duration) {
	if s.rtt == 0 || d < s.rtt {
		s.rtt = d
	}
}

// resendLocked sends again every unacknowledged frame from offset from.
// A repeat (frames the last resend covered, asked for with no
// acknowledgement since) is honoured only after half the caller's own
// resend interval, doubled for every repeat in a row (up to 64 times): an
// honest caller repeats a request no sooner (Receiver.resendRetry) and
// seldom, while a flood of requests of a few bytes would otherwise make
// the responder send its whole window again for each.
func (s *Sender) resendLocked(from int64, start bool) {
	now := time.Now()
	if !s.resentAt.IsZero() && from <= s.resentTo && s.acked <= s.resentAcked {
		if now.Sub(s.resentAt) < resendInterval(s.idle)/2<<min(s.repeats, 6) {
			return
		}
		s.repeats++
	} else {
		s.repeats = 0
	}
	s.resentAt, s.resentTo, s.resentAcked = now, s.sent, s.acked
	if start && s.start != nil {
		if s.publishLocked(s.start) != nil {
			return
		}
	}
	for i := range s.frames {
		f := &s.frames[i]
		if f.end() > from || (f.body[0] != xfer.Data && f.off >= from) {
			if s.publishLocked(f) != nil {
				return
			}
		}
	}
}

// beat sends heartbeats while the stream is quiet and ends the handler's
// context when the caller went silent or its inbox is gone.
func (s *Sender) beat() {
	defer s.beatWG.Done()
	tick(s.idle, s.stop, s.beatOnce)
}

// beatOnce is one heartbeat tick; false ends the heartbeats.
func (s *Sender) beatOnce() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if s.failErr != nil {
		return false
	}
	if now.Sub(s.lastCtl) > s.idle || (!s.goneAt.IsZero() && now.Sub(s.goneAt) > s.idle/2) {
		s.cancel(ErrCallerGone)
		s.cond.Broadcast()
	} else if now.Sub(s.lastSend) >= beatEvery(s.idle) {
		var flag byte
		if s.ended {
			flag = xfer.BeatEnded
		}
		s.heartbeatLocked(flag)
	}
	return true
}

// heartbeatLocked sends a heartbeat: how far the responder has sent, and
// flag (xfer.BeatEnded, xfer.BeatStalled or none).
func (s *Sender) heartbeatLocked(flag byte) {
	body := make([]byte, xfer.Prefix+1)
	xfer.PutPrefix(body, xfer.Heartbeat, s.sent)
	body[xfer.Prefix] = flag
	_ = s.publishLocked(&outFrame{off: s.sent, body: body})
}

// stalledLocked tells the caller that the writer waited d for credit, when
// that matters (xfer.Stall: a large part of a round trip on a long path)
// and the caller's window may grow (it declared more than it started
// with): the caller widens its window when its reader keeps up
// (xfer.Window.Stalled).
func (s *Sender) stalledLocked(d time.Duration) {
	if xfer.Stall(d, s.rtt) && s.window > xfer.StartCredit(s.window) && !s.ended && s.failErr == nil {
		s.heartbeatLocked(xfer.BeatStalled)
	}
}
