package natstest

import (
	"encoding/binary"
	"fmt"
	"time"
)

// The transfer-stream frame protocol (shim/stream_wire.go), written out
// byte by byte for tests in which a raw nats.go peer speaks it by hand: a
// hostile responder that forges frames for a shim caller, a hostile
// caller that forges control messages for a StreamHandler. The bytes are
// spelled out here, not imported, so that a change of the protocol in
// shim shows up as a failing hand-written peer.

// Frame kinds (responder to caller) and control kinds (caller to
// responder).
const (
	StreamStart     byte = 'S'
	StreamData      byte = 'D'
	StreamEnd       byte = 'E'
	StreamError     byte = 'X'
	StreamHeartbeat byte = 'B'

	StreamAck    byte = 'A'
	StreamResend byte = 'R'
	StreamCancel byte = 'C'
)

// StreamHeader is the request header that marks a stream request.
const StreamHeader = "Natssend-Stream"

// StreamMarker is StreamHeader's value for a caller with window and idle.
func StreamMarker(window int64, idle time.Duration) string {
	return fmt.Sprintf("1 %d %d", window, idle.Milliseconds())
}

// StreamFrame is a frame's body: kind, the 8-byte big-endian offset, the
// payload.
func StreamFrame(kind byte, off int64, payload []byte) []byte {
	b := make([]byte, 9+len(payload))
	b[0] = kind
	binary.BigEndian.PutUint64(b[1:9], uint64(off))
	copy(b[9:], payload)
	return b
}

// ParseStreamFrame splits a frame's body; ok is false for a body shorter
// than the prefix.
func ParseStreamFrame(b []byte) (kind byte, off int64, payload []byte, ok bool) {
	if len(b) < 9 {
		return 0, 0, nil, false
	}
	return b[0], int64(binary.BigEndian.Uint64(b[1:9])), b[9:], true
}

// StreamAckBody is an acknowledgement: received in order up to recv,
// credit up to grant, final once the end arrived.
func StreamAckBody(recv, grant int64, final bool) []byte {
	b := make([]byte, 18)
	b[0] = StreamAck
	binary.BigEndian.PutUint64(b[1:9], uint64(recv))
	binary.BigEndian.PutUint64(b[9:17], uint64(grant))
	if final {
		b[17] = 1
	}
	return b
}

// StreamResendBody asks for the frames from offset from (and the start
// frame when start).
func StreamResendBody(from int64, start bool) []byte {
	b := make([]byte, 10)
	b[0] = StreamResend
	binary.BigEndian.PutUint64(b[1:9], uint64(from))
	if start {
		b[9] = 1
	}
	return b
}
