package stream

import (
	"time"

	"github.com/natssend/natssend/internal/xfer"
)

// maxUnacked is the most a responder keeps of frames the caller has not
// acknowledged, whatever window the caller declared (up to
// MaxWindow): a caller that grants a large window and never
// acknowledges would make the responder hold that much for resends. Each
// held frame counts heldFrameCost on top of its payload.
const maxUnacked = DefaultWindow

// heldFrameCost is what the responder's bookkeeping of one held frame
// costs beyond its payload: the frame's entry in the frames slice (whose
// array may be twice as long as what it holds), the body's prefix and the
// rounding of its allocation. Small frames (a handler that flushes every
// few bytes, a caller that declares a small max-payload) would otherwise
// make the bookkeeping many times the payload bytes the bound counts.
const heldFrameCost = 160

// creditLocked is what may be sent now: the caller's credit, within
// maxUnacked (maxHeld) of what it acknowledged, counting each held frame's
// bookkeeping (heldFrameCost).
func (s *Sender) creditLocked() int64 {
	held := int64(len(s.frames)) * heldFrameCost
	return min(s.granted, s.acked+s.maxHeld-held) - s.sent
}

// flushLocked sends the buffered payload as data frames, each once the
// caller's window allows it and none beyond the credit it granted (the
// caller treats a frame past its credit as a broken stream). A frame waits
// for credit for all of the buffer or at least xfer.MinSend, so the
// credit's edge never cuts a sliver off a frame. While it waits for credit
// other goroutines may write and flush: it looks at the buffer afresh
// after every wait. byWriter: see stoppedLocked.
func (s *Sender) flushLocked(byWriter bool) error {
	var waited time.Time // when the wait for credit began
	for len(s.buf) > xfer.Prefix {
		if err := s.stoppedLocked(byWriter); err != nil {
			return err
		}
		have := len(s.buf) - xfer.Prefix
		credit := s.creditLocked()
		if credit < xfer.MinSend(s.window, have) {
			if waited.IsZero() {
				waited = time.Now()
			}
			s.cond.Wait()
			continue
		}
		if !waited.IsZero() {
			s.stalledLocked(time.Since(waited))
			waited = time.Time{}
		}
		n := int(min(int64(have), credit))
		var body []byte
		if n == have && len(s.buf) >= cap(s.buf)/2 {
			body, s.buf = s.buf, nil // a full frame: send the buffer itself
		} else {
			// A partial frame (a Flush, or the credit's edge): send an
			// exact copy and keep the rest in the frame buffer.
			body = make([]byte, xfer.Prefix+n)
			copy(body[xfer.Prefix:], s.buf[xfer.Prefix:xfer.Prefix+n])
			rest := copy(s.buf[xfer.Prefix:], s.buf[xfer.Prefix+n:])
			s.buf = s.buf[:xfer.Prefix+rest]
		}
		xfer.PutPrefix(body, xfer.Data, s.sent)
		s.sum.Add(body[xfer.Prefix:]) // hashed while it travels
		f := outFrame{off: s.sent, body: body}
		if s.sent-s.acked <= xfer.Quantum(s.window) {
			// Hardly anything of the stream ahead of it in transit: its
			// acknowledgement times the path, not the stream's own queue.
			f.at = time.Now()
		}
		s.frames = append(s.frames, f)
		s.sent += int64(n)
		if err := s.publishLocked(&s.frames[len(s.frames)-1]); err != nil {
			return err
		}
	}
	return nil
}
