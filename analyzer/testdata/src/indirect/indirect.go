// Package indirect holds sends reached indirectly: method values, // want package:"uses nats.go"
// variables holding one of several sending literals, mutual recursion and
// a function that reschedules itself.
package indirect

import (
	"log"
	"time"

	"github.com/nats-io/nats.go"
)

type publisher struct {
	nc      *nats.Conn
	pending [][]byte
}

// A method value of a send, called in a retry loop.
func (p *publisher) flushOne(data []byte) error {
	pub := p.nc.Publish
	var err error
	for i := 0; i < 3; i++ {
		if err = pub("events", data); err == nil { // want `call of pub is retried on failure`
			return nil
		}
	}
	return err
}

// Near miss: the method value over the pending messages.
func (p *publisher) flushAll() {
	pub := p.nc.Publish
	for _, data := range p.pending {
		if err := pub("events", data); err != nil {
			log.Print(err)
		}
	}
}

// One of two sending literals, chosen once, retried.
func sendEither(nc *nats.Conn, urgent bool, data []byte) error {
	var send func() error
	if urgent {
		send = func() error { return nc.Publish("urgent", data) }
	} else {
		send = func() error { return nc.Publish("normal", data) }
	}
	for {
		if err := send(); err == nil { // want `call of send \(via \(\*nats.Conn\).Publish\) is retried on failure`
			return nil
		}
		time.Sleep(time.Second)
	}
}

// Near miss: one of the literals does not send.
func sendOrLog(nc *nats.Conn, dry bool, data []byte) {
	send := func() error { return nc.Publish("normal", data) }
	if dry {
		send = func() error { log.Printf("would send %d bytes", len(data)); return nil }
	}
	for send() != nil {
		time.Sleep(time.Second)
	}
}

type relay struct {
	nc   *nats.Conn
	msg  *nats.Msg
	wait time.Duration
}

// Mutual recursion: deliver fails, backoff calls deliver again.
func (r *relay) deliver() error { // want deliver:`sends via \(\*nats\.Conn\)\.PublishMsg`
	if err := r.nc.PublishMsg(r.msg); err != nil { // want `call of \(\*nats.Conn\).PublishMsg is retried on failure by calling deliver again`
		return r.backoff(err)
	}
	return nil
}

func (r *relay) backoff(err error) error { // want backoff:`sends via \(\*nats\.Conn\)\.PublishMsg`
	log.Print(err)
	time.Sleep(r.wait)
	return r.deliver()
}

// Near miss: the error goes to a function that does not call back.
func (r *relay) deliverOnce() error { // want deliverOnce:`sends via \(\*nats\.Conn\)\.PublishMsg`
	if err := r.nc.PublishMsg(r.msg); err != nil {
		return r.report(err)
	}
	return nil
}

func (r *relay) report(err error) error {
	log.Print(err)
	return err
}

// A function that reschedules itself on failure.
func (r *relay) send() { // want send:`sends via \(\*nats\.Conn\)\.PublishMsg`
	if err := r.nc.PublishMsg(r.msg); err != nil { // want `call of \(\*nats.Conn\).PublishMsg is retried on failure by calling send again`
		time.AfterFunc(r.wait, func() { r.send() })
	}
}

// The same with a method value.
func (r *relay) sendLater() { // want sendLater:`sends via \(\*nats\.Conn\)\.PublishMsg`
	if err := r.nc.PublishMsg(r.msg); err != nil { // want `retried on failure by calling sendLater again`
		time.AfterFunc(r.wait, r.sendLater)
	}
}

// Near miss: a timer that only logs.
func (r *relay) sendAndWarn() { // want sendAndWarn:`sends via \(\*nats\.Conn\)\.PublishMsg`
	if err := r.nc.PublishMsg(r.msg); err != nil {
		time.AfterFunc(r.wait, func() { log.Print("still failing") })
	}
}
