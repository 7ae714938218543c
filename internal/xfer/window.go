package xfer

import "time"

// The credit window and its growth. The window a caller declares in its
// stream request is the most it may ever grant past what it received (the
// bound ParseCtl checks, and what either side may hold); a stream starts
// with the credit StartCredit gives and the caller may widen it up to the
// declared window, one step at a time, by Grow's rule. An honest caller
// never grants more than the declared window past what it acknowledges,
// so a responder's memory stays bounded by the declared window whatever
// the caller does, and a caller's by the credit it granted whatever the
// responder sends.

// InitialWindow is the credit a stream starts with when its declared
// window is larger: the responder may send that much before the caller's
// first acknowledgement.
const InitialWindow = 4 << 20

// MinFrame is the smallest cap FrameCap puts on a data frame's payload,
// whatever the declared window. A frame can still be smaller: the
// connection's limit caps it, and a frame is cut at the credit's edge
// (MinSend bounds how small that cut may be).
const MinFrame = 32 << 10

// StartCredit returns the credit a stream with the declared window starts with:
// the declared window, up to InitialWindow.
func StartCredit(declared int64) int64 { return max(1, min(declared, InitialWindow)) }

// Quantum returns how many bytes a caller receives, or its reader
// consumes, between two acknowledgements at most (a quarter of the
// starting credit): each acknowledgement after consuming Quantum more
// bytes raises the credit by at least Quantum.
func Quantum(declared int64) int64 { return max(1, StartCredit(declared)/4) }

// MinSend returns the fewest bytes a responder holding have bytes to send
// puts in a data frame: all of them, or at least Quantum. Waiting for
// that much credit, never a sliver of the credit's edge, cannot stall an
// honest caller: while the credit left is below Quantum, more than
// Quantum bytes are in flight, and the caller acknowledges every Quantum
// it consumes.
func MinSend(declared int64, have int) int64 { return min(int64(have), Quantum(declared)) }

// FrameCap returns the cap on a data frame's payload for a connection limit
// of limit bytes per message (the frame prefix included): a frame no
// larger than Quantum (at least MinFrame), so that credit arrives in
// whole frames and a frame is never cut at the credit's edge.
func FrameCap(declared, limit int64) int64 {
	return min(limit-Prefix, max(Quantum(declared), MinFrame))
}

// LongPath is the shortest round trip on which a responder reports its
// waits for credit: below it the starting credit (InitialWindow) already
// allows 400 MB/s or more, so a wait there is most likely the reader's,
// the server's or the machine's pace (a busy machine's scheduling delays
// alone reach a few milliseconds), not the window's.
const LongPath = 10 * time.Millisecond

// Stall reports whether a responder that waited wait for credit, on a
// path whose least round trip it measured as rtt (its start frame's
// publication to the caller's acknowledgement of it, a small message's
// round trip, or a data frame's to the acknowledgement that covers it;
// 0: not measured yet), tells the caller (BeatStalled): the path is long (LongPath) and the
// wait a large part of a round trip (a quarter or more), as when the
// window is below bandwidth times round trip.
func Stall(wait, rtt time.Duration) bool {
	return rtt >= LongPath && wait >= rtt/4
}

// Growth is the factor by which a stall widens the window: four, so that
// 4 MiB reaches 64 MiB in two round trips (a transfer of a few times the
// window is over in a few round trips; doubling took four).
const Growth = 4

// Heartbeat flags: the heartbeat frame's one-byte payload. A caller that
// does not know a flag ignores it.
const (
	// BeatEnded: the end (or error) frame went out; the caller asks for
	// it again if it did not arrive.
	BeatEnded byte = 1
	// BeatStalled: the responder had to wait for credit at the
	// heartbeat's offset for a large part of a round trip on a long path
	// (Stall): the window, not the writer, bounded the transfer there.
	BeatStalled byte = 2
)

// Window is the caller's side of the credit window: the window it grants
// now (Cur) and the declared window it may grow to (Max).
type Window struct {
	Cur, Max int64
	next     int64 // a stall below this offset does not widen the window again
	// The delivery rate of the current window (bytes received since at,
	// when it was set) and of the one before it, for Stalled's check
	// that a growth paid.
	at       time.Time
	atRecv   int64
	prevRate float64 // bytes per second with the window before; 0: none measured
	full     bool    // a growth did not pay: the path, not the window, is the bound; no more growth
}

// NewWindow returns the window of a caller that declared declared.
func NewWindow(declared int64) Window {
	return Window{Cur: StartCredit(declared), Max: max(1, declared)}
}

// FullGain is how much faster (1.25: a quarter) a stream must deliver after
// the window grew for it to grow again: a growth that did not pay as much
// shows a path whose own pace (a busy server or machine, a slow link), not
// the window, bounds the transfer, and the window grows no more (the
// "full pipe" test of TCP BBR's start-up). It keeps its size: a busy
// machine's noise can make a growth look as if it did not pay, and a
// window too small for a long path costs more than one too large, which
// costs only memory the caller declared it could hold.
const FullGain = 1.25

// Start marks the start of the stream (its start frame) at now: the first
// window's delivery rate is measured from there.
func (w *Window) Start(now time.Time) {
	w.at, w.atRecv = now, 0
}

// Stalled is the growth rule, applied at now when the responder reports
// (BeatStalled) that it waited for credit at offset off, with recv bytes
// received in order and consumed read. When the reader keeps up (at most
// half the window waiting to be read), the window, not the reader, bounds
// the transfer, as on a path whose bandwidth times round trip exceeds it:
// the window grows Growth times, up to Max, and Stalled reports true; the caller
// grants the new credit at once (consumed + Cur). It does not grow again
// until the responder stalls past that credit, so at most once per round
// trip, and only when the last growth paid: the delivery rate since it is
// FullGain times the rate before it or more. When it did not, the window
// stays as it is for the rest of the stream (Stalled reports false). A
// slow reader never widens the window, nor does a stall report ahead of
// what was received.
func (w *Window) Stalled(off, recv, consumed int64, now time.Time) bool {
	switch {
	case w.full, w.Cur >= w.Max, off > recv, off < w.next:
		return false
	case recv-consumed > w.Cur/2:
		return false // the reader is behind
	}
	var rate float64
	if d := now.Sub(w.at); !w.at.IsZero() && d > 0 {
		rate = float64(recv-w.atRecv) / d.Seconds()
	}
	if w.prevRate > 0 && rate < FullGain*w.prevRate {
		w.full = true
		return false
	}
	w.Cur = min(Growth*w.Cur, w.Max)
	w.next = consumed + w.Cur
	w.prevRate, w.at, w.atRecv = rate, now, recv
	return true
}
