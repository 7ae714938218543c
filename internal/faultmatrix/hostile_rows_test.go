package faultmatrix_test

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/internal/xfer"
	"github.com/natssend/natssend/shim"
)

// frames returns an act that sends the data ranges of hostileBody, then
// its end frame when end.
func frames(end bool, ranges ...[2]int) func(p *natstest.RawStream, _ <-chan struct{}) error {
	return func(p *natstest.RawStream, _ <-chan struct{}) error {
		for _, r := range ranges {
			if err := p.Send(xfer.Data, int64(r[0]), hostileBody[r[0]:r[1]]); err != nil {
				return err
			}
		}
		if end {
			return p.End(hostileBody)
		}
		return nil
	}
}

// one returns an act that sends one frame.
func one(kind byte, off int64, payload []byte) func(p *natstest.RawStream, _ <-chan struct{}) error {
	return func(p *natstest.RawStream, _ <-chan struct{}) error { return p.Send(kind, off, payload) }
}

// beats returns an act that leaves heartbeats at offset off running every
// beatGap.
func beats(off int64) func(p *natstest.RawStream, stop <-chan struct{}) error {
	return func(p *natstest.RawStream, stop <-chan struct{}) error {
		every(stop, func() { _ = p.Send(xfer.Heartbeat, off, []byte{0}) })
		return nil
	}
}

// TestStreamHostileResponder: Client.RequestStream against a raw responder
// that forges, repeats, overlaps and overruns frames, and ends
// inconsistently with what it delivered. Not parallel: the rows measure
// the heap.
func TestStreamHostileResponder(t *testing.T) {
	const flood = 48 << 20
	errFrame := func(off int64) func(p *natstest.RawStream, _ <-chan struct{}) error {
		return func(p *natstest.RawStream, _ <-chan struct{}) error {
			return p.SendMsg(xfer.Error, off, nil, nats.Header{"Nats-Service-Error-Code": {"409"}, "Nats-Service-Error": {"busy"}})
		}
	}
	runRowsAtOnce(t, 1, []callerRow{
		// Honest resends: taken, never doubled.
		{name: "data: duplicate frames", act: frames(true, [2]int{0, 1000}, [2]int{1000, 3000}, [2]int{1000, 3000}), read: ok},
		{name: "data: overlapping frames", act: frames(true, [2]int{500, 2000}, [2]int{1500, 3000}), read: ok},
		{name: "start: a duplicate", read: ok, act: func(p *natstest.RawStream, s <-chan struct{}) error {
			if err := p.Send(xfer.Start, 0, []byte{1}); err != nil {
				return err
			}
			return frames(true, [2]int{1000, 3000})(p, s)
		}},
		{name: "end: a duplicate", read: ok, act: func(p *natstest.RawStream, s <-chan struct{}) error {
			if err := frames(true, [2]int{1000, 3000})(p, s); err != nil {
				return err
			}
			return p.End(hostileBody)
		}},
		{name: "forged frames from a second responder are refused", read: ok, act: func(p *natstest.RawStream, s <-chan struct{}) error {
			forger := p.NC.NewInbox()
			if err := p.NC.PublishMsg(&nats.Msg{Subject: p.Req.Reply, Reply: forger, Data: xfer.Frame(xfer.Data, delivered, []byte("forged"))}); err != nil { //natssend:reviewed a raw peer speaking the stream protocol by hand; its frames are small
				return err
			}
			return frames(true, [2]int{1000, 3000})(p, s)
		}},

		// Beyond the credit: the caller holds at most its window.
		{name: "data: out of the window", act: one(xfer.Data, hostileWindow, []byte{1}), read: streamProtocol, within: atOnce, told: true},
		{name: "data: straddling the credit", act: one(xfer.Data, delivered, make([]byte, hostileWindow)), read: streamProtocol, within: atOnce, told: true},
		{name: "data: 48 MiB flood beyond a 256 KiB window", window: 256 << 10, read: streamProtocol, within: atOnce, told: true,
			act: func(p *natstest.RawStream, _ <-chan struct{}) error {
				chunk := bytes.Repeat([]byte{7}, 64<<10)
				for off := delivered; off < flood; off += len(chunk) {
					if err := p.Send(xfer.Data, int64(off), chunk); err != nil {
						return err
					}
				}
				return nil
			}},
		{name: "end: beyond the credit", act: one(xfer.End, 2*hostileWindow, make([]byte, 32)), read: streamProtocol, within: atOnce, told: true},
		{name: "heartbeat: beyond the credit", act: one(xfer.Heartbeat, 2*hostileWindow, []byte{0}), read: streamProtocol, within: atOnce, told: true},

		// Inconsistent with what was delivered.
		{name: "end: below what was delivered", act: func(p *natstest.RawStream, _ <-chan struct{}) error { return p.End(hostileBody[:500]) },
			read: streamProtocol, within: atOnce, told: true},
		{name: "end: a short digest", act: one(xfer.End, delivered, []byte{1, 2}), read: streamProtocol, within: atOnce, told: true},
		{name: "end: the wrong digest", act: one(xfer.End, delivered, make([]byte, 32)), within: atOnce,
			read: wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeStreamBroken, is: []error{io.ErrUnexpectedEOF, shim.ErrStreamCorrupt}, sent: yes}},
		{name: "error frame: below what was delivered", act: errFrame(500), read: streamProtocol, within: atOnce, told: true},
		{name: "error frame: at what was delivered is the responder's error", act: errFrame(delivered), within: atOnce,
			read: wantErr{outcome: shim.OutcomeRejected, code: "409", sent: yes}},
		{name: "heartbeat: below what was delivered", act: one(xfer.Heartbeat, 500, []byte{0}), read: streamProtocol, within: atOnce, told: true},
		{name: "start: at an offset", act: one(xfer.Start, delivered, []byte{1}), read: streamProtocol, within: atOnce, told: true},
		{name: "control garbage: a frame of no known kind", act: one('Z', delivered, nil), read: streamProtocol, within: atOnce, told: true},
		{name: "control garbage: a frame shorter than its prefix", read: streamProtocol, within: atOnce, told: true,
			act: func(p *natstest.RawStream, _ <-chan struct{}) error {
				return p.NC.PublishMsg(&nats.Msg{Subject: p.Req.Reply, Reply: p.Ctrl, Data: []byte{xfer.Data, 0}}) //natssend:reviewed a raw peer speaking the stream protocol by hand; its frames are small
			}},

		// Waits a peer cannot extend.
		{name: "silent responder: the idle bound", idle: 300 * time.Millisecond, act: func(*natstest.RawStream, <-chan struct{}) error { return nil },
			within: 300*time.Millisecond + atOnce, read: streamIdleErr, told: true},
		{name: "lost frames never resent, heartbeats go on: the idle bound", idle: time.Second, within: time.Second + atOnce, told: true,
			act: func(p *natstest.RawStream, s <-chan struct{}) error {
				if err := frames(false, [2]int{2000, 3000})(p, s); err != nil {
					return err
				}
				return beats(3000)(p, s)
			},
			read: wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeStreamBroken, is: []error{io.ErrUnexpectedEOF, shim.ErrStreamLost}, sent: yes}},
		{name: "heartbeats forever, no data: the deadline", deadline: time.Second, act: beats(delivered), within: time.Second + atOnce, read: streamDeadline},
		{name: "first frame: heartbeats before it do not extend its wait", noStart: true, timeout: 500 * time.Millisecond, act: beats(0),
			within: 500*time.Millisecond + atOnce, open: &firstDeadline},
		{name: "first frame: none", noStart: true, timeout: 500 * time.Millisecond, act: func(*natstest.RawStream, <-chan struct{}) error { return nil },
			within: 500*time.Millisecond + atOnce, open: &firstDeadline},
		{name: "first frame: of no known kind", noStart: true, act: one('Z', 0, nil), within: atOnce, open: &streamProtocol},
	})
}
