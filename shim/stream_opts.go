package shim

import (
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/stream"
	"github.com/natssend/natssend/internal/xfer"
)

// Transfer stream defaults.
const (
	// DefaultStreamWindow is the caller's flow-control window when
	// StreamWindow is not set: the most a responder may send beyond what
	// the caller's reader has consumed. A stream starts with
	// InitialStreamWindow of credit and widens toward it as the transfer
	// needs (see StreamWindow), so a stream holds at most this much in
	// the caller and as much in the responder (for resends, bookkeeping
	// of each held frame counted). 64 MiB.
	DefaultStreamWindow = stream.DefaultWindow
	// InitialStreamWindow is the credit every stream starts with (its
	// window, when that is smaller): 4 MiB.
	InitialStreamWindow = xfer.InitialWindow
	// MaxStreamWindow is the largest window StreamWindow accepts: 1 GiB.
	MaxStreamWindow = stream.MaxWindow
	// DefaultStreamIdle is how long either side of a stream waits without
	// hearing from the other before it gives the stream up: 10 s.
	DefaultStreamIdle = stream.DefaultIdle
	// MaxStreamIdle is the longest idle bound (StreamIdle) a stream may
	// have: a responder refuses a request declaring more, since a caller
	// gone silent holds the handler until its idle bound passes. 10
	// minutes.
	MaxStreamIdle = stream.MaxIdle
)

// Errors of transfer streams, for errors.Is (the stream engine's, the
// same values).
var (
	// ErrStreamClosed: Read after Close, or Write/Flush after the
	// StreamHandlerFunc returned.
	ErrStreamClosed = stream.ErrClosed
	// ErrStreamIdle: the responder sent nothing (no frame, no heartbeat)
	// for the stream's idle bound (StreamIdle).
	ErrStreamIdle = stream.ErrIdle
	// ErrStreamLost: frames were lost and the responder did not send them
	// again within the stream's idle bound.
	ErrStreamLost = stream.ErrLost
	// ErrStreamCorrupt: the end frame's length or digest (HighwayHash-256,
	// or SHA-256 with a peer that checks only that: negotiated per stream)
	// does not match the bytes received.
	ErrStreamCorrupt = stream.ErrCorrupt
	// ErrStreamCanceled is the cause (context.Cause) of a responder's
	// context when the caller closed the stream (ReplyStream.Close or the
	// end of the caller's context).
	ErrStreamCanceled = stream.ErrCanceled
	// ErrCallerGone is the cause (context.Cause) of a responder's context
	// when the caller's side went away without closing: no credit or
	// keepalive for the stream's idle bound, or its inbox gone.
	ErrCallerGone = stream.ErrCallerGone
	// ErrStreamProtocol: the stream's peer broke the frame protocol (a
	// responder sending beyond the credit it was given, a caller granting
	// credit beyond the window it declared, an end, error or heartbeat
	// frame inconsistent with what was delivered, a frame or control
	// message of no known kind). The stream is broken at once
	// (CodeStreamBroken, OutcomeUnknown); on the responder it is also the
	// cause (context.Cause) of the handler's context.
	ErrStreamProtocol = stream.ErrProtocol
)

// extOpts are the CallOptions of RequestStream and RequestMany; other
// calls ignore them.
type extOpts struct {
	window   int64         // StreamWindow; 0: DefaultStreamWindow
	idle     time.Duration // StreamIdle; 0: DefaultStreamIdle
	max      int           // MaxReplies; 0: no count
	stall    time.Duration // StallTimeout; 0: none
	sentinel func(*nats.Msg) bool
}

// StreamWindow sets a RequestStream's flow-control window in bytes, the
// most the responder may send beyond what the caller's reader consumed
// (DefaultStreamWindow if not set): it bounds memory, as the caller holds
// at most n bytes (frames are cut at the credit's edge), the responder as
// much for resends. A
// responder never keeps more than DefaultStreamWindow of frames the caller
// has not acknowledged, whatever n says: beyond it, n only lets the
// reader fall further behind.
//
// The window grows like TCP's receive window: a stream starts with
// InitialStreamWindow of credit (n when n is smaller: a window of at most
// InitialStreamWindow is fixed), and the caller quadruples it, up to n, when
// the responder reports that it waited for credit for a quarter of a round
// trip or more on a path whose round trip, as the responder measures it,
// is 10 ms or more (a gateway, a WAN link: there a window below bandwidth
// times round trip bounds the transfer) while the caller's reader kept up
// (at most half the window unread); at most once per round trip. On a
// shorter path the starting window already allows 400 MB/s or more and
// stays as it is. A slow reader never widens it, so the responder's Write
// blocks while the reader is behind; nothing is dropped.
//
// n must be 1 to MaxStreamWindow. Other calls ignore it.
func StreamWindow(n int) StreamOption {
	return streamOpt(func(o *callOpts) error {
		if n < 1 || n > MaxStreamWindow {
			return invalidOption("StreamWindow(%d): the window must be 1 to %d bytes", n, MaxStreamWindow)
		}
		o.x.window = int64(n)
		return nil
	})
}

// StreamIdle sets a RequestStream's idle bound (DefaultStreamIdle if not
// set): the caller fails the stream (ErrStreamIdle) when the responder
// sent nothing, not even a heartbeat, for d, and the responder's context
// ends (ErrCallerGone) when the caller sent no credit or keepalive for d.
// Both sides send a heartbeat or keepalive every d/5. It must be at least
// 50 ms and at most MaxStreamIdle. Other calls ignore it.
func StreamIdle(d time.Duration) StreamOption {
	return streamOpt(func(o *callOpts) error {
		if d < 50*time.Millisecond {
			return invalidOption("StreamIdle(%v): the idle bound must be at least 50ms", d)
		}
		if d > MaxStreamIdle {
			return invalidOption("StreamIdle(%v): the idle bound must be at most MaxStreamIdle (%v)", d, MaxStreamIdle)
		}
		o.x.idle = d
		return nil
	})
}

// MaxReplies ends a RequestMany after n replies (error replies count). n
// must be positive. Other calls ignore it.
func MaxReplies(n int) ManyOption {
	return manyOpt(func(o *callOpts) error {
		if n < 1 {
			return invalidOption("MaxReplies(%d): at least 1 reply", n)
		}
		o.x.max = n
		return nil
	})
}

// StallTimeout ends a RequestMany when no reply arrived for d since the
// previous one (the wait for the first reply is bounded by the call's
// deadline only). d must be positive. Other calls ignore it.
func StallTimeout(d time.Duration) ManyOption {
	return manyOpt(func(o *callOpts) error {
		if d <= 0 {
			return invalidOption("StallTimeout(%v): the gap must be positive", d)
		}
		o.x.stall = d
		return nil
	})
}

// Sentinel ends a RequestMany at the first reply for which f returns true;
// that reply is not yielded. EmptyReply is the usual sentinel. f must not
// be nil. Other calls ignore it.
func Sentinel(f func(m *nats.Msg) bool) ManyOption {
	return manyOpt(func(o *callOpts) error {
		if f == nil {
			return invalidOption("Sentinel(nil): a nil function")
		}
		o.x.sentinel = f
		return nil
	})
}

// EmptyReply reports whether m has neither body nor headers: the sentinel
// by which a responder says it has nothing more to send
// (Sentinel(EmptyReply)).
func EmptyReply(m *nats.Msg) bool { return m != nil && len(m.Data) == 0 && len(m.Header) == 0 }
