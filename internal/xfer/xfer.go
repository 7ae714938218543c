// Package xfer holds the rules of natssend's transfer-stream protocol as
// pure functions, without NATS: which frames a caller may take and which
// control messages a responder may act on, given what each side has
// granted, sent and received. Package shim wires them to NATS (the frame
// layout is in shim/stream_wire.go); a frame or control message a rule
// refuses breaks the stream at once (CodeStreamBroken, ErrStreamProtocol).
//
// The rules are what an honest peer can never break, so that a hostile
// one cannot make the other side hold more than its window or wait
// longer than its bounds:
//
//   - a responder tells the offset after all it sent in every end, error
//     and heartbeat frame, so none is below what the caller received;
//   - a responder never sends past the credit it was granted;
//   - a caller grants at most its declared window past what it
//     acknowledges, acknowledges only what was sent, asks for resends
//     only of what was sent, and sends the final acknowledgement only
//     after the end, for all of it.
package xfer

import (
	"encoding/binary"
	"fmt"
)

// Frame kinds (responder to caller) and control kinds (caller to
// responder).
const (
	Start     byte = 'S'
	Data      byte = 'D'
	End       byte = 'E'
	Error     byte = 'X'
	Heartbeat byte = 'B'

	Ack    byte = 'A'
	Resend byte = 'R'
	Cancel byte = 'C'

	// DigestSize is the length of an end frame's digest (either kind).
	DigestSize = 32
)

// Receiver is the caller's side of a stream when a frame arrives: the
// bytes received in order and the most credit it ever granted.
type Receiver struct {
	Recv     int64
	MaxGrant int64
}

// CheckFrame returns what makes a frame of kind at offset off with a
// payload of n bytes break the protocol for rc, or "". A frame that passes
// may still be a duplicate, an overlap (a resend: its new bytes count) or
// ahead of what was received (a gap, to be asked for again).
func (rc Receiver) CheckFrame(kind byte, off int64, n int) string {
	switch kind {
	case Start, Data, End, Error, Heartbeat:
	default:
		return fmt.Sprintf("a frame of unknown kind %q", kind)
	}
	end := off
	if kind == Data {
		end = off + int64(n)
	}
	switch {
	case off < 0:
		return fmt.Sprintf("a frame at the negative offset %d", off)
	case kind == Start && off != 0:
		return fmt.Sprintf("a start frame at offset %d", off)
	case end > rc.MaxGrant || end < off:
		return fmt.Sprintf("a frame up to offset %d, beyond the credit granted (%d)", end, rc.MaxGrant)
	case kind != Data && kind != Start && off < rc.Recv:
		return fmt.Sprintf("a frame of kind %q at offset %d, below the %d bytes delivered", kind, off, rc.Recv)
	case kind == End && off == rc.Recv && n != DigestSize:
		return fmt.Sprintf("an end frame with a %d-byte digest", n)
	}
	return ""
}

// Sender is the responder's side of a stream when a control message
// arrives: the window the caller declared, the bytes sent, and whether the
// end (or error) frame went out.
type Sender struct {
	Window int64
	Sent   int64
	Ended  bool
}

// Ctl is a control message that passed ParseCtl.
type Ctl struct {
	Kind  byte
	Recv  int64 // Ack: bytes received in order
	Grant int64 // Ack: credit up to this offset
	Final bool  // Ack: the end arrived
	From  int64 // Resend: from this offset
	Start bool  // Resend: the start frame too
	// Broken (Cancel): the caller ended the stream because the responder
	// broke it (a frame the rules refuse, a digest mismatch), not because
	// it closed it.
	Broken bool
}

// CancelBroken is the reason byte of a cancel that says the stream broke
// (Ctl.Broken); a cancel without one says the caller closed it. A peer of
// the protocol before the reason byte reads it as a malformed cancel,
// which breaks the stream too.
const CancelBroken byte = 1

// CancelBody returns a cancel control message; broken adds the reason
// byte (CancelBroken).
func CancelBody(broken bool) []byte {
	if broken {
		return []byte{Cancel, CancelBroken}
	}
	return []byte{Cancel}
}

// ParseCtl reads a control message and returns it, or what makes it break
// the protocol for sd. A stale acknowledgement (below an earlier one)
// passes: applying it changes nothing.
func (sd Sender) ParseCtl(b []byte) (Ctl, string) {
	if len(b) == 0 {
		return Ctl{}, "an empty control message"
	}
	c := Ctl{Kind: b[0]}
	switch c.Kind {
	case Ack:
		if len(b) != 18 || b[17] > 1 {
			return c, fmt.Sprintf("a malformed acknowledgement (%d bytes)", len(b))
		}
		c.Recv, c.Grant, c.Final = be(b[1:9]), be(b[9:17]), b[17] == 1
		switch {
		case c.Recv < 0 || c.Recv > sd.Sent:
			return c, fmt.Sprintf("an acknowledgement of %d bytes, %d sent", uint64(c.Recv), sd.Sent)
		case c.Grant < 0 || c.Grant-c.Recv > sd.Window:
			return c, fmt.Sprintf("credit up to offset %d, beyond the %d-byte window it declared past the %d bytes received", uint64(c.Grant), sd.Window, c.Recv)
		case c.Final && (!sd.Ended || c.Recv != sd.Sent):
			return c, fmt.Sprintf("a final acknowledgement of %d bytes before the end at %d", c.Recv, sd.Sent)
		}
	case Resend:
		if len(b) != 10 || b[9] > 1 {
			return c, fmt.Sprintf("a malformed resend request (%d bytes)", len(b))
		}
		c.From, c.Start = be(b[1:9]), b[9] == 1
		if c.From < 0 || c.From > sd.Sent {
			return c, fmt.Sprintf("a resend request from offset %d, %d sent", uint64(c.From), sd.Sent)
		}
	case Cancel:
		if len(b) > 2 || (len(b) == 2 && b[1] != CancelBroken) {
			return c, fmt.Sprintf("a malformed cancel (%d bytes)", len(b))
		}
		c.Broken = len(b) == 2
	default:
		return c, fmt.Sprintf("a control message of unknown kind %q", c.Kind)
	}
	return c, ""
}

// be reads a big-endian 8-byte offset as the signed value the protocol
// means (a value past math.MaxInt64 is negative, and refused).
func be(b []byte) int64 { return int64(binary.BigEndian.Uint64(b)) }

// Prefix is a frame's prefix: its kind and its 8-byte big-endian offset.
const Prefix = 9

// PutPrefix writes a frame's kind and offset into b[:Prefix].
func PutPrefix(b []byte, kind byte, off int64) {
	b[0] = kind
	binary.BigEndian.PutUint64(b[1:Prefix], uint64(off))
}

// Frame returns a frame's body: the prefix, then payload.
func Frame(kind byte, off int64, payload []byte) []byte {
	b := make([]byte, Prefix+len(payload))
	PutPrefix(b, kind, off)
	copy(b[Prefix:], payload)
	return b
}

// ParseFrame returns a frame's kind, offset and payload; ok is false for a
// body shorter than the prefix or with a negative offset.
func ParseFrame(b []byte) (kind byte, off int64, payload []byte, ok bool) {
	if len(b) < Prefix {
		return 0, 0, nil, false
	}
	off = be(b[1:Prefix])
	if off < 0 {
		return 0, 0, nil, false
	}
	return b[0], off, b[Prefix:], true
}

// AckBody is an acknowledgement: recv bytes received in order, credit up
// to grant, final once the end arrived.
func AckBody(recv, grant int64, final bool) []byte {
	b := make([]byte, 18)
	b[0] = Ack
	binary.BigEndian.PutUint64(b[1:9], uint64(recv))
	binary.BigEndian.PutUint64(b[9:17], uint64(grant))
	if final {
		b[17] = 1
	}
	return b
}

// ResendBody asks for the frames from offset from (and the start frame
// when start).
func ResendBody(from int64, start bool) []byte {
	b := make([]byte, 10)
	b[0] = Resend
	binary.BigEndian.PutUint64(b[1:9], uint64(from))
	if start {
		b[9] = 1
	}
	return b
}
