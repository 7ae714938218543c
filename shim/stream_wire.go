package shim

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/natssend/natssend/internal/xfer"
)

// HeaderStream marks a RequestStream request: "1 <window bytes> <idle ms>",
// the protocol version, the caller's initial credit window and its idle
// bound. StreamHandler answers only requests that carry it.
const HeaderStream = "Natssend-Stream"

// streamVersion is the frame protocol's version.
const streamVersion = 1

// The frame protocol. Every frame from the responder goes to the caller's
// inbox (the request's reply subject) with the responder's control inbox
// as its reply subject; its body starts with a kind byte and a big-endian
// 8-byte offset: the stream position (bytes of body before it), which is
// the sequence number loss is detected by.
//
//	S off=0 [version]          start: the responder's headers as NATS headers
//	D off   payload            data
//	E off=total [sha256]       end: the whole body's length and digest
//	X off=total                error: micro error headers, like an error reply
//	B off=sent [ended]         heartbeat: how far the responder has sent
//
// The caller sends to the control inbox:
//
//	A recv grant [final]       ack: bytes received in order; credit up to grant
//	R from [start]             resend from offset from (and the start frame)
//	C                          cancel: the caller closed the stream
//
// The rules both sides check every frame and control message against are
// in internal/xfer.
const (
	frameStart     = xfer.Start
	frameData      = xfer.Data
	frameEnd       = xfer.End
	frameError     = xfer.Error
	frameHeartbeat = xfer.Heartbeat

	ctlAck    = xfer.Ack
	ctlResend = xfer.Resend
	ctlCancel = xfer.Cancel

	framePrefix = 9 // kind + offset
)

// putPrefix writes a frame's kind and offset into b[:framePrefix].
func putPrefix(b []byte, kind byte, off int64) {
	b[0] = kind
	binary.BigEndian.PutUint64(b[1:framePrefix], uint64(off))
}

// parseFrame returns a frame's kind, offset and payload; ok is false for a
// message that is not a frame.
func parseFrame(b []byte) (kind byte, off int64, payload []byte, ok bool) {
	if len(b) < framePrefix {
		return 0, 0, nil, false
	}
	off = int64(binary.BigEndian.Uint64(b[1:framePrefix]))
	if off < 0 {
		return 0, 0, nil, false
	}
	return b[0], off, b[framePrefix:], true
}

// ctlMsg builds a control message body.
func ackBody(recv, grant int64, final bool) []byte {
	b := make([]byte, 18)
	b[0] = ctlAck
	binary.BigEndian.PutUint64(b[1:9], uint64(recv))
	binary.BigEndian.PutUint64(b[9:17], uint64(grant))
	if final {
		b[17] = 1
	}
	return b
}

func resendBody(from int64, start bool) []byte {
	b := make([]byte, 10)
	b[0] = ctlResend
	binary.BigEndian.PutUint64(b[1:9], uint64(from))
	if start {
		b[9] = 1
	}
	return b
}

// streamMarker is HeaderStream's value: the protocol version, the
// caller's window and idle bound, and (when positive) how long it waits
// for the first frame.
func streamMarker(window int64, idle, first time.Duration) string {
	if first <= 0 {
		return fmt.Sprintf("%d %d %d", streamVersion, window, idle.Milliseconds())
	}
	return fmt.Sprintf("%d %d %d %d", streamVersion, window, idle.Milliseconds(), timeoutMS(first))
}

// parseMarker reads HeaderStream; ok is false when it is absent or not a
// version this responder speaks. first is how long the caller waits for
// the first frame (0: not said; a caller before it sent three fields).
func parseMarker(v string) (window int64, idle, first time.Duration, ok bool) {
	f := strings.Fields(v)
	if len(f) < 3 || f[0] != strconv.Itoa(streamVersion) {
		return 0, 0, 0, false
	}
	w, err1 := strconv.ParseInt(f[1], 10, 64)
	ms, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil || w < 1 || w > MaxStreamWindow || ms < 1 {
		return 0, 0, 0, false
	}
	if len(f) >= 4 {
		if fms, err := strconv.ParseInt(f[3], 10, 64); err == nil && fms >= 1 && fms <= int64(math.MaxInt64/time.Millisecond) {
			first = time.Duration(fms) * time.Millisecond
		}
	}
	return w, time.Duration(ms) * time.Millisecond, first, true
}

// beatEvery is the heartbeat and keepalive interval for an idle bound.
func beatEvery(idle time.Duration) time.Duration {
	return max(idle/5, 5*time.Millisecond)
}
