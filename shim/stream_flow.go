package shim

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// The responder's side of flow control and liveness: the caller's
// credit, acknowledgements, resend requests and cancel, and heartbeats.

// onCtl handles the caller's control messages. One the protocol rules
// out (a grant beyond the window the caller declared, an acknowledgement
// of bytes never sent, a final acknowledgement before the end, a message
// of no known kind) breaks the stream at once; only valid ones count as
// the caller's sign of life.
func (s *streamOut) onCtl(m *nats.Msg) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.cond.Broadcast()
	if isNoResponders(m) {
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
	if bad := s.ctlLocked(m.Data); bad != "" {
		s.brokeLocked(bad)
		return
	}
	s.lastCtl = time.Now()
	s.goneAt = time.Time{}
}

// ctlLocked applies one control message and returns what makes it break
// the protocol, or "".
func (s *streamOut) ctlLocked(b []byte) string {
	if len(b) == 0 {
		return "an empty control message"
	}
	switch b[0] {
	case ctlAck:
		if len(b) != 18 || b[17] > 1 {
			return fmt.Sprintf("a malformed acknowledgement (%d bytes)", len(b))
		}
		recv, grant, final := int64(beUint(b[1:9])), int64(beUint(b[9:17])), b[17] == 1
		switch {
		case recv < 0 || recv > s.sent:
			return fmt.Sprintf("an acknowledgement of %d bytes, %d sent", uint64(recv), s.sent)
		case grant < 0 || grant-recv > s.window:
			return fmt.Sprintf("credit up to offset %d, beyond the %d-byte window it declared past the %d bytes received", uint64(grant), s.window, recv)
		case final && (!s.ended || recv != s.sent):
			return fmt.Sprintf("a final acknowledgement of %d bytes before the end at %d", recv, s.sent)
		}
		s.start = nil
		s.granted = max(s.granted, grant)
		if recv > s.acked {
			s.acked = recv
			s.releaseLocked()
		}
		s.final = s.final || final
	case ctlResend:
		if len(b) != 10 || b[9] > 1 {
			return fmt.Sprintf("a malformed resend request (%d bytes)", len(b))
		}
		from := int64(beUint(b[1:9]))
		if from < 0 || from > s.sent {
			return fmt.Sprintf("a resend request from offset %d, %d sent", uint64(from), s.sent)
		}
		s.resendLocked(from, b[9] == 1)
	case ctlCancel:
		if len(b) != 1 {
			return fmt.Sprintf("a malformed cancel (%d bytes)", len(b))
		}
		s.cancel(ErrStreamCanceled)
	default:
		return fmt.Sprintf("a control message of unknown kind %q", b[0])
	}
	return ""
}

// brokeLocked ends the stream because the caller broke the protocol: the
// handler's context ends (ErrStreamProtocol), Write fails, nothing more is
// sent and the unacknowledged frames are dropped.
func (s *streamOut) brokeLocked(what string) {
	s.failErr = brokenError("the caller broke the stream protocol: "+what, ErrStreamProtocol)
	s.cancel(ErrStreamProtocol)
	s.frames, s.free, s.buf, s.start = nil, nil, nil, nil
}

// releaseLocked drops the frames the caller has received.
func (s *streamOut) releaseLocked() {
	i := 0
	for i < len(s.frames) && s.frames[i].body[0] == frameData && s.frames[i].end() <= s.acked {
		if len(s.free) < 4 {
			s.free = append(s.free, s.frames[i].body)
		}
		s.frames[i] = outFrame{}
		i++
	}
	s.frames = s.frames[i:]
}

// resendLocked sends again every unacknowledged frame from offset from.
func (s *streamOut) resendLocked(from int64, start bool) {
	if start && s.start != nil {
		if s.publishLocked(s.start) != nil {
			return
		}
	}
	for i := range s.frames {
		f := &s.frames[i]
		if f.end() > from || (f.body[0] != frameData && f.off >= from) {
			if s.publishLocked(f) != nil {
				return
			}
		}
	}
}

// beat sends heartbeats while the stream is quiet and ends the handler's
// context when the caller went silent or its inbox is gone.
func (s *streamOut) beat() {
	defer s.beatWG.Done()
	every := beatEvery(s.idle)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		now := time.Now()
		if s.failErr != nil {
			s.mu.Unlock()
			return
		}
		if now.Sub(s.lastCtl) > s.idle || (!s.goneAt.IsZero() && now.Sub(s.goneAt) > s.idle/2) {
			s.cancel(ErrCallerGone)
			s.cond.Broadcast()
		} else if now.Sub(s.lastSend) >= every {
			body := make([]byte, framePrefix+1)
			putPrefix(body, frameHeartbeat, s.sent)
			if s.ended {
				body[framePrefix] = 1
			}
			_ = s.publishLocked(&outFrame{off: s.sent, body: body})
		}
		s.mu.Unlock()
	}
}

func beUint(b []byte) uint64 {
	return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
}
