package stream

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/natssend/natssend/internal/xfer"
)

// Version is the frame protocol's version.
const Version = 1

// Bounds and defaults of a stream (docs/protocol.md, 6.1 and 6.4).
const (
	// DefaultWindow is the caller's window when it sets none, and the
	// most a responder holds of frames the caller has not acknowledged.
	DefaultWindow = 64 << 20
	// MaxWindow is the largest window a caller may declare.
	MaxWindow = 1 << 30
	// DefaultIdle is the idle bound when the caller sets none.
	DefaultIdle = 10 * time.Second
	// MaxIdle is the longest idle bound a caller may declare: a responder
	// refuses a request declaring more.
	MaxIdle = 10 * time.Minute
	// MinPayload is the smallest max-payload a stream caller may declare
	// (its request's max-payload): below it a responder refuses the
	// stream (INVALID_ARGUMENT) before its handler runs. Frames of a few
	// payload bytes each would cost far more in headers, messages and
	// bookkeeping than they carry; no NATS server is run with a limit
	// this small.
	MinPayload = 1024
)

// The frame protocol. Every frame from the responder goes to the caller's
// inbox (the request's reply subject) with the responder's control inbox
// as its reply subject; its body starts with a kind byte and a big-endian
// 8-byte offset: the stream position (bytes of body before it), which is
// the sequence number loss is detected by.
//
//	S off=0 [version [digest]] start: the responder's headers as NATS headers; the digest
//	                           the end frame carries (xfer.DigestHighway; absent: SHA-256)
//	D off   payload            data
//	E off=total [digest]       end: the whole body's length and its 32-byte digest
//	X off=total                error: micro error headers, like an error reply
//	B off=sent [flag]          heartbeat: how far the responder has sent; flag 1: the end
//	                           went out, 2: it waited for credit (the caller may widen its window)
//
// The caller sends to the control inbox:
//
//	A recv grant [final]       ack: bytes received in order; credit up to grant
//	R from [start]             resend from offset from (and the start frame)
//	C [broken]                 cancel: the caller closed the stream; broken 1: it found
//	                           the stream broken (a frame the rules refuse, a digest mismatch)
//
// The frames' and control messages' kinds, and the rules both sides
// check every frame and control message against, are internal/xfer's.

// Marker is the stream request header's value (Natssend-Stream): the
// protocol version, the caller's window and idle bound, how long it waits
// for the first frame in milliseconds (firstMS; 0: not said) and the
// digests it checks beyond SHA-256 (xfer.HighwayToken).
func Marker(window int64, idle time.Duration, firstMS int64) string {
	return fmt.Sprintf("%d %d %d %d %s", Version, window, idle.Milliseconds(), firstMS, xfer.HighwayToken)
}

// Req is what a stream request's header says.
type Req struct {
	window int64
	idle   time.Duration
	first  time.Duration // how long the caller waits for the first frame; 0: not said
	digest byte          // the digest the responder uses: the best the caller checks
}

// ParseMarker reads the stream request header; ok is false when it is absent or not a
// version this responder speaks. A caller before this version sent three
// or four fields: it waits for the first frame as long as it likes and
// checks SHA-256 only.
func ParseMarker(v string) (sr Req, ok bool) {
	f := strings.Fields(v)
	if len(f) < 3 || f[0] != strconv.Itoa(Version) {
		return sr, false
	}
	w, err1 := strconv.ParseInt(f[1], 10, 64)
	ms, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil || w < 1 || w > MaxWindow || ms < 1 || ms > MaxIdle.Milliseconds() {
		return sr, false
	}
	sr.window, sr.idle = w, time.Duration(ms)*time.Millisecond
	if len(f) >= 4 {
		if fms, err := strconv.ParseInt(f[3], 10, 64); err == nil && fms >= 1 && fms <= int64(math.MaxInt64/time.Millisecond) {
			sr.first = time.Duration(fms) * time.Millisecond
		}
	}
	if len(f) >= 5 && slices.Contains(strings.Split(f[4], ","), xfer.HighwayToken) {
		sr.digest = xfer.DigestHighway
	}
	return sr, true
}

// beatEvery is the heartbeat and keepalive interval for an idle bound.
func beatEvery(idle time.Duration) time.Duration {
	return max(idle/5, 5*time.Millisecond)
}

// tick calls f every beatEvery(idle) until stop is closed or f returns
// false: the responder's heartbeats, the caller's keepalives.
func tick(idle time.Duration, stop <-chan struct{}, f func() bool) {
	t := time.NewTicker(beatEvery(idle))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if !f() {
			return
		}
	}
}
