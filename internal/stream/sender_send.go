package stream

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/callerr"
	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/wire"
	"github.com/natssend/natssend/internal/xfer"
)

// Sending a stream's frames: the decision against the responder
// connection's current limit (or the caller's max-payload, when lower:
// fitPeer), the pieces of a frame above it, and what a failed send means.

// publishLocked sends f. A frame lost to a reconnect stays in the
// unacknowledged window, for the caller to ask again; only a closed
// connection fails the stream. A data frame above the current limit (it
// dropped after a reconnect) goes in pieces.
func (s *Sender) publishLocked(f *outFrame) error {
	size := int64(wire.HeaderSize(f.hdr) + len(f.body))
	// Frames go even once the stream's context is done (the error frame
	// of a handler whose deadline passed, say); ctx bounds the stream.
	v, limit, err := s.st.Send(context.WithoutCancel(s.ctx), connlimit.Send{
		Decide: func(limit int64) connlimit.Verdict {
			return connlimit.Decide(size, s.fitPeer(limit), connlimit.NoClaimCheck)
		},
		Write: func() error {
			return s.nc.PublishMsg(&nats.Msg{Subject: s.inbox, Reply: s.ctrl, Header: f.hdr, Data: f.body}) //natssend:reviewed the frame's size was decided against the limit just now (connlimit's Send)
		},
	})
	limit = s.fitPeer(limit)
	switch {
	case err != nil:
		return s.sendFailedLocked(err)
	case v == connlimit.Fits:
		s.lastSend = time.Now()
		return nil
	case f.body[0] != xfer.Data:
		s.failErr = callerr.TooLarge("stream frame", size, limit, nil)
		return s.failErr
	}
	// A data frame above the limit (it fell after a reconnect) goes in pieces.
	return s.publishPiecesLocked(f, int(limit-xfer.Prefix))
}

func (s *Sender) publishPiecesLocked(f *outFrame, size int) error {
	if size < 1 {
		s.failErr = callerr.TooLarge("stream frame", xfer.Prefix+1, int64(size+xfer.Prefix), nil)
		return s.failErr
	}
	data := f.body[xfer.Prefix:]
	for off := 0; off < len(data); off += size {
		piece := data[off:min(off+size, len(data))]
		body := make([]byte, xfer.Prefix+len(piece))
		xfer.PutPrefix(body, xfer.Data, f.off+int64(off))
		copy(body[xfer.Prefix:], piece)
		if err := s.publishLocked(&outFrame{off: f.off + int64(off), body: body}); err != nil {
			return err
		}
	}
	return nil
}

// sendFailedLocked decides what a failed send means: a closed connection
// ends the stream; anything else (reconnecting) is a loss that a resend
// repairs.
func (s *Sender) sendFailedLocked(err error) error {
	if gone := s.goneErrLocked(); gone != nil {
		return gone
	}
	if errors.Is(err, nats.ErrConnectionClosed) || s.nc.IsClosed() {
		s.failErr = callerr.SendError(s.ctx, err, true)
		s.cond.Broadcast()
		return s.failErr
	}
	return nil
}

// startLocked subscribes the control inbox and sends the start frame.
func (s *Sender) startLocked() error {
	var h nats.Header
	if len(s.hdr) > 0 {
		h = make(nats.Header, len(s.hdr))
		for k, v := range s.hdr {
			h[k] = append([]string(nil), v...)
		}
	}
	if err := callerr.CheckMsg(s.inbox, s.ctrl, h); err != nil { // the frames' reply subject is s.ctrl
		s.failErr = err
		return err
	}
	body := make([]byte, xfer.Prefix+1, xfer.Prefix+2)
	xfer.PutPrefix(body, xfer.Start, 0)
	body[xfer.Prefix] = Version
	if s.digest != xfer.DigestSHA256 {
		body = append(body, s.digest) // a caller that checks SHA-256 only is never sent one
	}
	limit, err := s.st.Limit(s.ctx)
	if err != nil {
		s.failErr = callerr.SendError(s.ctx, err, false)
		return s.failErr
	}
	limit = s.fitPeer(limit)
	if size := int64(wire.HeaderSize(h) + len(body)); size > limit {
		s.failErr = callerr.TooLarge("stream start frame (the StreamWriter's headers)", size, limit, nil)
		return s.failErr
	}
	sub, err := s.nc.Subscribe(s.ctrl, s.onCtl)
	if err != nil {
		s.failErr = callerr.SendError(s.ctx, err, false)
		return s.failErr
	}
	s.sub = sub
	s.started = true
	if s.firstBy != nil {
		s.firstBy.Stop()
	}
	s.lastCtl = time.Now()
	s.start = &outFrame{off: 0, body: body, hdr: h}
	s.startAt = time.Now()
	s.beatWG.Add(1)
	go s.beat()
	return s.publishLocked(s.start)
}

// fitPeer lowers the responder connection's limit to the caller's
// max-payload, when the caller said one: a frame must fit the caller's
// server too (across a leafnode, one message over its limit closes the
// whole link).
func (s *Sender) fitPeer(limit int64) int64 {
	if s.peer > 0 && s.peer < limit {
		return s.peer
	}
	return limit
}

// newBufLocked returns an empty frame buffer sized to the current limit.
func (s *Sender) newBufLocked() ([]byte, error) {
	limit, err := s.st.Limit(s.ctx)
	switch {
	case err == nil:
		s.lastLimit = limit
	case s.goneErrLocked() != nil:
		return nil, s.goneErrLocked()
	case s.lastLimit > 0 && !s.nc.IsClosed():
		// Reconnecting: fill a frame of the last link's size; a frame
		// above the next link's limit goes in pieces.
		limit = s.lastLimit
	default:
		return nil, callerr.SendError(s.ctx, err, false)
	}
	limit = s.fitPeer(limit)
	if limit <= xfer.Prefix {
		return nil, callerr.TooLarge("stream frame", xfer.Prefix+1, limit, nil)
	}
	size := xfer.Prefix + int(xfer.FrameCap(s.window, limit))
	// Oldest first: the digest takes frames in order, so a spare buffer
	// it has not finished with is followed only by others.
	for hashed := s.sum.Hashed(); len(s.free) > 0 && s.free[0].end <= hashed; {
		b := s.free[0]
		s.free[0] = spareBuf{}
		s.free = s.free[1:]
		if cap(b.body) == size { // one of another size (the limit changed) is dropped
			return b.body[:xfer.Prefix], nil
		}
	}
	return make([]byte, xfer.Prefix, size), nil
}
