package stream

import (
	"bytes"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/callerr"
	"github.com/natssend/natssend/internal/xfer"
	"github.com/natssend/natssend/outcome"
)

// The caller's side of the frame protocol: frames in order, gaps and
// resend requests, acknowledgements and credit, keepalives and the idle
// bound.

// OnMsg handles every message on the caller's inbox. A frame from the
// stream's responder that the protocol rules out breaks the stream at
// once (see frameLocked); frames of another responder are told to stop.
func (r *Receiver) OnMsg(m *nats.Msg) {
	kind, off, payload, ok := xfer.ParseFrame(m.Data)
	r.mu.Lock()
	defer r.mu.Unlock()
	if m.Reply == "" || (!ok && (r.ctrl == "" || m.Reply != r.ctrl)) {
		r.plainLocked(m)
		return
	}
	if h := dropHook.Load(); ok && h != nil && (*h)(kind, off) {
		return
	}
	if r.closed || r.err != nil || r.ended {
		return
	}
	if r.ctrl != "" && m.Reply != r.ctrl {
		// A second responder (not a queue group): stop it.
		_ = r.nc.Publish(m.Reply, xfer.CancelBody(false)) //natssend:reviewed a one-byte cancel to a second responder: no effect to replay
		return
	}
	bad := "a frame shorter than its prefix, or with a negative offset"
	if ok {
		bad = r.frameLocked(m, kind, off, payload)
	}
	if bad != "" {
		err := brokenError("the responder broke the stream protocol: "+bad, ErrProtocol)
		if !r.started {
			// Before the first frame: the opening fails with it, and the
			// responder is told.
			r.startErr = err
			r.signalLocked()
			r.publishCtl(xfer.CancelBody(true))
		}
		r.failLocked(err)
		r.cleanup()
	}
	r.notify()
}

// frameLocked takes a frame of the stream's responder and returns what
// makes it break the protocol (xfer.Receiver.CheckFrame: a frame beyond
// the credit granted, so the caller holds at most its window; an end,
// error frame or heartbeat below what was delivered; ...), or "". A
// duplicate or overlap of what arrived is a resend: its new bytes are
// taken.
func (r *Receiver) frameLocked(m *nats.Msg, kind byte, off int64, payload []byte) string {
	if !r.started {
		r.ctrl = m.Reply
	}
	if bad := (xfer.Receiver{Recv: r.recv, MaxGrant: r.maxGrant}).CheckFrame(kind, off, len(payload)); bad != "" {
		return bad
	}
	r.lastRx = time.Now()
	if !r.started {
		if kind != xfer.Start {
			r.gapLocked() // the start frame was lost
			return ""
		}
		if len(payload) > 0 && payload[0] != Version {
			// A responder answers in the version the request names: another
			// one's frames cannot be read as this version's.
			return fmt.Sprintf("a start frame of protocol version %d, not the %d the caller asked for", payload[0], Version)
		}
		r.digest = xfer.DigestSHA256
		if len(payload) > 1 {
			r.digest = payload[1]
		}
		if r.sum = xfer.NewHash(r.digest); r.sum == nil {
			return fmt.Sprintf("a start frame naming digest %d, which the caller did not offer", r.digest)
		}
		r.started, r.hdr = true, m.Header
		r.win.Start(time.Now())
		// An acknowledgement at once: the responder times the path's
		// round trip by it (a small message, not a frame behind others).
		r.ackLocked(false)
		r.signalLocked()
		return ""
	}
	switch kind {
	case xfer.Data:
		r.dataLocked(off, payload)
	case xfer.End:
		if off > r.recv {
			r.gapLocked()
			return ""
		}
		if !bytes.Equal(r.sum.Sum(nil), payload) {
			// Not the final ack: the responder is told that its stream
			// broke (the cancel's reason byte), and why is its to learn.
			r.endErr = brokenError("the stream's "+xfer.DigestName(r.digest)+" digest does not match the bytes received", ErrCorrupt)
			r.ended = true
			r.publishCtl(xfer.CancelBody(true))
			r.cleanup()
			return ""
		}
		r.endLocked()
	case xfer.Error:
		if off > r.recv {
			r.gapLocked()
			return ""
		}
		// An error frame without micro's error headers is an error still
		// (remoteError's nil *outcome.Error must not become a non-nil error).
		if e := callerr.RemoteError(m); e != nil {
			r.endErr = e
		} else {
			r.endErr = callerr.RemoteFailure("the responder failed mid-stream")
		}
		r.endLocked()
	case xfer.Heartbeat:
		var flag byte
		if len(payload) > 0 {
			flag = payload[0]
		}
		switch {
		case off > r.recv || flag == xfer.BeatEnded:
			r.gapLocked() // frames (or the end) were lost at the tail
		case flag == xfer.BeatStalled && r.win.Stalled(off, r.recv, r.consumed, time.Now()):
			r.ackLocked(false) // the wider window's credit, now
		}
	}
	return ""
}

// plainLocked handles a message that is not a frame: before the stream
// started, the answer to the request (no responders, an error reply).
func (r *Receiver) plainLocked(m *nats.Msg) {
	if r.started || r.signaled {
		return
	}
	switch rerr := callerr.RemoteError(m); {
	case callerr.IsNoResponders(m):
		r.startErr = callerr.SendError(r.ctx, nats.ErrNoResponders, true)
	case rerr != nil:
		r.startErr = rerr
	default:
		r.startErr = outcome.MayHaveRunError(outcome.CodeInternal, "the responder answered with a plain reply, not a stream (is it a StreamHandler?)", nil)
	}
	r.signalLocked()
}

func (r *Receiver) signalLocked() {
	if !r.signaled {
		r.signaled = true
		close(r.startCh)
	}
}

// dataLocked takes a data frame at off.
func (r *Receiver) dataLocked(off int64, payload []byte) {
	end := off + int64(len(payload))
	switch {
	case off > r.recv:
		r.gapLocked()
		return
	case end <= r.recv:
		return // a duplicate from a resend
	}
	// The credit check (frameLocked) bounds what is queued: recv never
	// passes maxGrant, which is at most what was read plus the window.
	data := payload[r.recv-off:]
	// Hashed here, on the subscription's goroutine, while nats.go's read
	// loop takes the next frame and the reader the ones before: the
	// payload was just copied, so it is still in the cache.
	r.sum.Write(data)
	r.queueLocked(data)
	r.recv = end
	r.want = -1
	r.nAck++
	if r.recv-r.ackRecv >= xfer.Quantum(r.window) || r.nAck >= 64 {
		r.ackLocked(false)
	}
}

// Small frames are copied into buffers of smallBuf bytes shared by the
// next small frames, so that the caller holds about its window of unread
// bytes whatever the frames' sizes: a responder sending the window in
// frames of one byte would otherwise hold a slice and an allocation per
// byte (about 40 times the window).
const (
	smallFrame = 512
	smallBuf   = 4096
)

// queueLocked queues data for the reader.
func (r *Receiver) queueLocked(data []byte) {
	if len(data) >= smallFrame {
		r.q = append(r.q, data)
		r.tailOwned = false
		return
	}
	if n := len(r.q); r.tailOwned && n > 0 && cap(r.q[n-1])-len(r.q[n-1]) >= len(data) {
		r.q[n-1] = append(r.q[n-1], data...)
		return
	}
	b := make([]byte, len(data), smallBuf)
	copy(b, data)
	r.q = append(r.q, b)
	r.tailOwned = true
}

// endLocked records the end: the final ack lets the responder go, and
// nothing more is needed from the connection.
func (r *Receiver) endLocked() {
	r.ended = true
	r.ackLocked(true)
	r.cleanup()
}

// keepalive sends acknowledgements and credit while the stream runs (the
// responder's sign that the caller is alive), repeats lost resend
// requests, and fails the stream when the responder went silent.
func (r *Receiver) keepalive() { tick(r.idle, r.done, r.keepaliveOnce) }

// keepaliveOnce is one keepalive tick; false ends the keepalive.
func (r *Receiver) keepaliveOnce() bool {
	r.mu.Lock()
	if r.ended || r.err != nil || r.closed {
		r.mu.Unlock()
		return false
	}
	var fail error
	switch {
	case r.nc.IsClosed():
		fail = brokenError("the connection closed before the stream's end", nats.ErrConnectionClosed)
	case time.Since(r.lastRx) > r.idle:
		fail = brokenError("no frame or heartbeat from the responder within the stream's idle bound", ErrIdle)
	case r.want == r.recv && time.Since(r.lostAt) > r.idle:
		fail = brokenError("frames lost in transit were not sent again within the stream's idle bound", ErrLost)
	default:
		if r.want == r.recv {
			r.gapLocked()
		}
		r.ackLocked(false)
	}
	r.mu.Unlock()
	if fail != nil {
		r.fail(fail)
		return false
	}
	return true
}

// gapLocked asks the responder to send again from what was received in
// order (and the start frame if it is missing).
func (r *Receiver) gapLocked() {
	if r.want == r.recv && time.Since(r.wantAt) < r.resendRetry() {
		return
	}
	if r.want != r.recv {
		r.lostAt = time.Now()
	}
	r.want, r.wantAt = r.recv, time.Now()
	resends.Add(1)
	r.publishCtl(xfer.ResendBody(r.recv, !r.started))
}

// resendRetry is how long a resend request is given before it is repeated.
func (r *Receiver) resendRetry() time.Duration { return resendInterval(r.idle) }

// resendInterval is how long a caller with idle bound idle gives a resend
// request before it repeats it; a responder ignores a repeat that comes
// sooner.
func resendInterval(idle time.Duration) time.Duration {
	return min(250*time.Millisecond, max(beatEvery(idle), 20*time.Millisecond))
}

// ackLocked acknowledges what was received and grants credit up to what
// was read plus the current window (xfer.Window: it starts at
// xfer.StartCredit and grows up to the window declared).
func (r *Receiver) ackLocked(final bool) {
	grant := r.consumed + r.win.Cur
	r.maxGrant = max(r.maxGrant, grant)
	r.publishCtl(xfer.AckBody(r.recv, grant, final))
	r.ackRecv, r.ackUsed, r.nAck = r.recv, r.consumed, 0
}

// publishCtl sends a control message to the responder's control inbox:
// only ever the reply subject of the frames received, so that a caller
// needs no publish permission beyond allow_responses (docs/permissions.md).
func (r *Receiver) publishCtl(body []byte) {
	if r.ctrl != "" {
		_ = r.nc.Publish(r.ctrl, body) //natssend:reviewed a control message of at most 18 bytes; a lost one is repeated or made up by the next
	}
}
