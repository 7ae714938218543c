package realcode

import (
	"context"
	"encoding/binary"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
)

// A stream transport over core NATS, as a production one is written: each
// frame is published, then the sender waits for the peer's ack, which its
// own subscription puts on a channel (directly from the callback, or
// through a goroutine reading a channel subscription); when the timer
// fires first, the same frame goes out again. Beside them, the loops that
// wait on a channel but do not resend on a timeout.

var errAckTimeout = errors.New("stream: no ack")

const ackWait = 2 * time.Second

type frameAck struct{ seq uint64 }

type streamConn struct {
	nc      *nats.Conn
	out     string
	acks    chan frameAck  // fed by onAck, the subscription's callback
	ctl     chan *nats.Msg // a channel subscription
	helloOK chan struct{}  // fed by readControl, reading ctl
	byeOK   chan struct{}  // closed by readControl
	stop    chan struct{}  // closed by Close, not by a message
	pongs   chan struct{}  // fed by onPong
	missed  int
}

func dialStream(nc *nats.Conn, in, out string) (*streamConn, error) {
	s := &streamConn{
		nc: nc, out: out,
		acks: make(chan frameAck, 16), ctl: make(chan *nats.Msg, 16),
		helloOK: make(chan struct{}, 1), byeOK: make(chan struct{}),
		stop: make(chan struct{}), pongs: make(chan struct{}, 1),
	}
	if _, err := nc.Subscribe(in+".ack", s.onAck); err != nil {
		return nil, err
	}
	if _, err := nc.ChanSubscribe(in+".ctl", s.ctl); err != nil {
		return nil, err
	}
	if _, err := nc.Subscribe(in+".pong", func(*nats.Msg) { s.pongs <- struct{}{} }); err != nil {
		return nil, err
	}
	go s.readControl()
	return s, nil
}

func (s *streamConn) onAck(m *nats.Msg) {
	if len(m.Data) < 8 {
		return
	}
	s.acks <- frameAck{seq: binary.BigEndian.Uint64(m.Data)}
}

func (s *streamConn) readControl() {
	for m := range s.ctl {
		switch string(m.Data) {
		case "hello-ok":
			s.helloOK <- struct{}{}
		case "bye-ok":
			close(s.byeOK)
		}
	}
}

// writeFrame sends a data frame and waits for its ack, sending it again
// up to 3 times: reported.
func (s *streamConn) writeFrame(seq uint64, frame []byte) error { // want writeFrame:`sends via \(\*nats\.Conn\)\.Publish`
	timer := time.NewTimer(ackWait)
	defer timer.Stop()
	for resends := 0; ; resends++ {
		if err := s.nc.Publish(s.out, frame); err != nil { // want `call of \(\*nats.Conn\).Publish is sent again when the timer at line 93 fires before its acknowledgement: it may have arrived and its ack been lost`
			return err
		}
		timer.Reset(ackWait)
	wait:
		for {
			select {
			case a := <-s.acks:
				if a.seq == seq {
					return nil
				}
				// an older frame's ack: keep waiting
			case <-timer.C:
				if resends == 3 {
					return errAckTimeout
				}
				break wait
			}
		}
	}
}

// hello is the handshake: the ack comes through a goroutine reading a
// channel subscription. Reported.
func (s *streamConn) hello(ctx context.Context) error { // want hello:`sends via \(\*nats\.Conn\)\.Publish`
	for attempt := 0; attempt < 3; attempt++ {
		if err := s.nc.Publish(s.out+".ctl", []byte("hello")); err != nil { // want `call of \(\*nats.Conn\).Publish is sent again when the timer at line 113 fires`
			return err
		}
		select {
		case <-s.helloOK:
			return nil
		case <-time.After(ackWait):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return errAckTimeout
}

// bye discards the publish's error and waits for a closed channel.
// Reported.
func (s *streamConn) bye() { // want bye:`sends via \(\*nats\.Conn\)\.Publish`
	for i := 0; i < 3; i++ {
		s.nc.Publish(s.out+".ctl", []byte("bye")) // want `call of \(\*nats.Conn\).Publish is sent again when the timer at line 129 fires`
		select {
		case <-s.byeOK:
			return
		case <-time.After(ackWait):
		}
	}
}

// heartbeat stops on a channel no message feeds: the timer is its period.
// Not reported.
func (s *streamConn) heartbeat() { // want heartbeat:`sends via \(\*nats\.Conn\)\.Publish`
	for {
		if err := s.nc.Publish(s.out+".hb", nil); err != nil {
			return
		}
		select {
		case <-s.stop:
			return
		case <-time.After(time.Second):
		}
	}
}

// ping goes round whether the pong came or not: periodic. Not reported.
func (s *streamConn) ping() { // want ping:`sends via \(\*nats\.Conn\)\.Publish`
	for {
		if err := s.nc.Publish(s.out+".ping", nil); err != nil {
			return
		}
		select {
		case <-s.pongs:
		case <-time.After(ackWait):
			s.missed++
		}
		select {
		case <-s.stop:
			return
		case <-time.After(5 * time.Second):
		}
	}
}

// credit waits for the ack of a frame and sends the next frame on a
// timeout: iteration, not a resend. Not reported.
func (s *streamConn) credit(frames [][]byte) error { // want credit:`sends via \(\*nats\.Conn\)\.Publish`
	for _, f := range frames {
		if err := s.nc.Publish(s.out, f); err != nil {
			return err
		}
		select {
		case <-s.acks:
		case <-time.After(ackWait):
		}
	}
	return nil
}
