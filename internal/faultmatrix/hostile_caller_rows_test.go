package faultmatrix_test

import (
	"context"
	"testing"
	"time"

	"github.com/natssend/natssend/internal/xfer"
	"github.com/natssend/natssend/shim"
)

// then returns an onFrame that grants nothing beyond the first window
// (so that the handler is still writing) and, at the first data frame,
// sends b (once).
func then(b []byte) func(c *rawCaller, kind byte, off int64, payload []byte) {
	sent := false
	return func(c *rawCaller, kind byte, off int64, payload []byte) {
		c.take(kind, off, payload)
		if kind == xfer.Data && !sent {
			sent = true
			c.send(b)
		}
	}
}

// twice answers every frame honestly, and sends every answer twice with a
// resend request from what arrived in between.
func twice(c *rawCaller, kind byte, off int64, payload []byte) {
	before := c.recv
	honest(c, kind, off, payload)
	if kind == xfer.Data && c.recv > before { // not for the duplicates it asked for
		c.send(xfer.ResendBody(c.recv, false))
		c.ack(false)
	}
}

// TestStreamHostileCaller: a StreamHandler against a raw caller that
// grants beyond its window, acknowledges what was never sent, sends
// garbage, never sends the final acknowledgement or goes silent. Not
// parallel: the rows measure the heap.
func TestStreamHostileCaller(t *testing.T) {
	protocolGone := []error{shim.ErrStreamProtocol}
	runRowsAtOnce(t, 1, []respRow{
		{name: "honest: every frame acknowledged", write: ok},
		{name: "ack and resend: duplicates", onFrame: twice, write: ok},
		{name: "ack: credit beyond the declared window (48 MiB written)", body: 48 << 20, write: streamProtocol, cause: protocolGone, finish: protocolGone,
			onFrame: func(c *rawCaller, kind byte, off int64, payload []byte) {
				c.take(kind, off, payload)
				if kind == xfer.Start {
					c.send(xfer.AckBody(0, 1<<40, false)) // and never an acknowledgement of data
				}
			}},
		{name: "ack: of bytes never sent", onFrame: then(xfer.AckBody(1<<30, 1<<30, false)), write: streamProtocol, cause: protocolGone},
		{name: "ack: final before the end", onFrame: then(xfer.AckBody(0, hostileWindow, true)), write: streamProtocol, cause: protocolGone},
		{name: "ack: malformed", onFrame: then([]byte{xfer.Ack, 0, 0}), write: streamProtocol, cause: protocolGone},
		{name: "resend: from beyond what was sent", onFrame: then(xfer.ResendBody(1<<30, false)), write: streamProtocol, cause: protocolGone},
		{name: "control garbage: a message of no known kind", onFrame: then([]byte("garbage")), write: streamProtocol, cause: protocolGone},
		{name: "control garbage: an empty message", onFrame: then(nil), write: streamProtocol, cause: protocolGone},
		{name: "cancel", onFrame: then([]byte{xfer.Cancel}), cause: []error{shim.ErrStreamCanceled},
			write: wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeCanceled, is: []error{shim.ErrStreamCanceled, context.Canceled}, sent: yes}},
		{name: "no final acknowledgement, keepalives go on: the end-ack bound", idle: time.Second, within: 2*time.Second + atOnce,
			write: ok, finish: []error{shim.ErrCallerGone},
			onFrame: func(c *rawCaller, kind byte, off int64, payload []byte) {
				c.take(kind, off, payload)
				if kind == xfer.Data {
					c.ack(false)
				}
			},
			keep: func(c *rawCaller) { c.ack(false) }},
		{name: "silent caller: the idle bound", idle: 300 * time.Millisecond, within: 300*time.Millisecond + atOnce,
			onFrame: func(*rawCaller, byte, int64, []byte) {}, cause: []error{shim.ErrCallerGone},
			write: wantErr{outcome: shim.OutcomeUnknown, is: []error{shim.ErrCallerGone}, sent: yes}},
		{name: "keepalives without credit: the caller's deadline", timeout: time.Second, within: time.Second + atOnce,
			onFrame: func(c *rawCaller, kind byte, off int64, payload []byte) { c.take(kind, off, payload) },
			keep:    func(c *rawCaller) { c.send(xfer.AckBody(c.recv, c.window, false)) },
			cause:   []error{context.DeadlineExceeded},
			write:   wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeDeadlineExceeded, is: []error{context.DeadlineExceeded}, sent: yes}},
	})
}
