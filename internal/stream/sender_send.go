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
			return s.nc.PublishMsg(&nats.Msg{Subject: s.inbox, Reply: s.ctrl, Header: f.hdr, Data: f.body})
		},
	})
	limit = s.fitPeer(limit)
	switch {
	case err != nil:
		return s.sendFailedLocked(err)
	case v == connlimit.Fits:
		s.lastSend = time.Now()
		return nil
	case f.body[0] != frameData:
		s.failErr = callerr.TooLarge("stream frame", size, limit, nil)
		return s.failErr
	}
	// A data frame above the limit (it fell after a reconnect) goes in pieces.
	return s.publishPiecesLocked(f, int(limit-framePrefix))
}

func (s *Sender) publishPiecesLocked(f *outFrame, size int) error {
	if size < 1 {
		s.failErr = callerr.TooLarge("stream frame", framePrefix+1, int64(size+framePrefix), nil)
		return s.failErr
	}
	data := f.body[framePrefix:]
	for off := 0; off < len(data); off += size {
		piece := data[off:min(off+size, len(data))]
		body := make([]byte, framePrefix+len(piece))
		xfer.PutPrefix(body, frameData, f.off+int64(off))
		copy(body[framePrefix:], piece)
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
