package stream

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/callerr"
	"github.com/natssend/natssend/internal/xfer"
	"github.com/natssend/natssend/outcome"
)

// The end of an outgoing stream: the end or error frame, the wait for
// the caller's last acknowledgement, the ordinary reply of a stream that
// never started.

// Finish ends the stream after its handler returned fnErr. A stream that
// never started answers with an ordinary reply, sent by reply (code,
// message, and whether it is a rejection): fnErr's (mapped as
// callerr.ErrorFields maps it), or PAYLOAD_TOO_LARGE or INTERNAL when the
// start failed here; a nil fnErr is the empty stream. A started one gets
// the rest of the body and the end frame, or the error frame; then Finish
// waits (within the idle bound and the caller's deadline) for the caller
// to acknowledge the end, resending what it asks for. It returns what
// could not be sent.
func (s *Sender) Finish(fnErr error, reply func(code, msg string, rejected bool) error) error {
	if s.firstBy != nil {
		defer s.firstBy.Stop()
	}
	s.mu.Lock()
	s.returned = true
	// The caller stopped waiting for the first frame (firstBy): nothing is
	// sent to it any more.
	gone := !s.started && errors.Is(context.Cause(s.ctx), ErrCallerGone)
	if !s.started && s.failErr == nil && fnErr == nil && !gone {
		_ = s.startLocked() // the empty stream; a refusal sets failErr
	}
	if !s.started && (s.failErr != nil || fnErr != nil || gone) {
		failErr := s.failErr
		s.mu.Unlock()
		defer s.cancel(ErrClosed)
		if gone {
			return errors.Join(fnErr, failErr, context.Cause(s.ctx))
		}
		if errors.Is(s.ctx.Err(), context.DeadlineExceeded) {
			// The caller's deadline has passed (the request's timeout is
			// measured from when the handler started, so it is never
			// earlier than the caller's): nobody waits for an error
			// reply, and one that raced the caller's own timer would hide
			// its deadline.
			return errors.Join(fnErr, failErr)
		}
		var e *outcome.Error
		switch {
		case errors.As(failErr, &e) && e.Code == outcome.CodePayloadTooLarge:
			return errors.Join(failErr, reply(outcome.CodePayloadTooLarge, e.Message, false))
		case failErr != nil:
			return errors.Join(failErr, reply(outcome.CodeInternal, failErr.Error(), false))
		}
		return reply(callerr.ErrorFields(fnErr))
	}
	defer s.mu.Unlock()
	err := s.finishLocked(fnErr)
	if err == nil {
		err = s.awaitFinalLocked()
	}
	if s.started {
		close(s.stop)
		s.mu.Unlock()
		s.beatWG.Wait()
		_ = s.sub.Unsubscribe()
		s.mu.Lock()
	}
	s.cancel(ErrClosed)
	s.sum.Stop()
	s.frames, s.free, s.buf, s.start = nil, nil, nil, nil
	return err
}

// endAckWait is how long a responder waits for the caller's final
// acknowledgement after its end or error frame: twice the idle bound (the
// caller repairs a loss at the tail within one), never extended by
// keepalives or resend requests.
func endAckWait(idle time.Duration) time.Duration { return 2 * idle }

// awaitFinalLocked waits for the caller's final acknowledgement, resending
// what it asks for meanwhile, within endAckWait and the caller's deadline.
func (s *Sender) awaitFinalLocked() error {
	late := time.AfterFunc(endAckWait(s.idle), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.ackLate = true
		s.cond.Broadcast()
	})
	defer late.Stop()
	for !s.final && !s.ackLate && s.ctx.Err() == nil && s.failErr == nil {
		s.cond.Wait()
	}
	switch {
	case s.final:
		return nil
	case errors.Is(context.Cause(s.ctx), ErrProtocol):
		// The caller found the stream broken after its end went out (a
		// digest mismatch: corrupted on the way, or a forged frame).
		return brokenError("the caller found the stream broken after its end (its digest did not match what arrived)", ErrProtocol)
	case s.ctx.Err() != nil:
		return nil
	case s.failErr != nil:
		return s.failErr
	}
	s.cancel(ErrCallerGone)
	return outcome.MayHaveRunError(outcome.CodeStreamBroken, fmt.Sprintf("the caller did not acknowledge the stream's end within %v", endAckWait(s.idle)),
		errors.Join(ErrCallerGone, io.ErrUnexpectedEOF))
}

func (s *Sender) finishLocked(fnErr error) error {
	if s.failErr != nil {
		return s.failErr
	}
	if !s.started {
		if err := s.startLocked(); err != nil {
			return err
		}
	}
	if err := s.flushLocked(false); err != nil {
		return err
	}
	return s.sendLastLocked(fnErr)
}

// sendLastLocked sends the end frame (err nil) or the error frame.
func (s *Sender) sendLastLocked(fnErr error) error {
	var body []byte
	var h nats.Header
	if fnErr == nil {
		body = make([]byte, xfer.Prefix, xfer.Prefix+sha256.Size)
		xfer.PutPrefix(body, xfer.End, s.sent)
		body = s.sum.Sum(body) // waits for the frames still being hashed
	} else {
		body = make([]byte, xfer.Prefix)
		xfer.PutPrefix(body, xfer.Error, s.sent)
		h = callerr.ErrorHeader(callerr.ErrorFields(fnErr))
	}
	s.frames = append(s.frames, outFrame{off: s.sent, body: body, hdr: h})
	s.ended = true
	return s.publishLocked(&s.frames[len(s.frames)-1])
}
