package shim

import (
	"time"

	"github.com/nats-io/nats.go"
)

// The responder's side of flow control and liveness: the caller's
// credit, acknowledgements, resend requests and cancel, and heartbeats.

// onCtl handles the caller's control messages.
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
	if len(m.Data) == 0 {
		return
	}
	s.lastCtl = time.Now()
	s.goneAt = time.Time{}
	switch b := m.Data; b[0] {
	case ctlAck:
		if len(b) < 18 {
			return
		}
		recv, grant := int64(beUint(b[1:9])), int64(beUint(b[9:17]))
		s.start = nil
		if grant > s.granted {
			s.granted = grant
		}
		if recv > s.acked && recv <= s.sent {
			s.acked = recv
			s.releaseLocked()
		}
		if b[17] == 1 {
			s.final = true
		}
	case ctlResend:
		if len(b) < 10 {
			return
		}
		s.resendLocked(int64(beUint(b[1:9])), b[9] == 1)
	case ctlCancel:
		s.cancel(ErrStreamCanceled)
	}
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
