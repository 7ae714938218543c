package realcode

import (
	"time"

	"github.com/nats-io/nats.go"
)

// localBus copies its connection into a local before sending and dials
// again when the send fails, as event buses and RPC clients do.
type localBus struct {
	nc  *nats.Conn
	buf []byte
}

func (b *localBus) current() *nats.Conn { return b.nc }
func (b *localBus) redial() error       { return nil }
func (b *localBus) refill(data []byte)  { b.buf = append(b.buf[:0], data...) }

// The connection copied into a local, redial, the field's connection.
func (b *localBus) request(data []byte) (*nats.Msg, error) { // want request:`sends via \(\*nats\.Conn\)\.Request`
	nc := b.nc
	msg, err := nc.Request("orders.create", data, time.Second) // want `call of \(\*nats\.Conn\)\.Request is retried on failure by the same send at line 28`
	if err == nil {
		return msg, nil
	}
	_ = b.redial()
	return b.nc.Request("orders.create", data, time.Second)
}

// Through the getter, with the redial's error checked.
func (b *localBus) emit(topic string, data []byte) error { // want emit:`sends via \(\*nats\.Conn\)\.Publish`
	nc := b.current()
	err := nc.Publish(topic, data) // want `call of \(\*nats\.Conn\)\.Publish is retried on failure by the same send at line 41`
	if err == nil {
		return nil
	}
	if rerr := b.redial(); rerr != nil {
		return rerr
	}
	return b.current().Publish(topic, data)
}

// A second local after the redial.
func (b *localBus) requestAgain(data []byte) (*nats.Msg, error) { // want requestAgain:`sends via \(\*nats\.Conn\)\.Request`
	nc := b.nc
	msg, err := nc.Request("orders.create", data, time.Second) // want `call of \(\*nats\.Conn\)\.Request is retried on failure by the same send at line 53`
	if err == nil {
		return msg, nil
	}
	_ = b.redial()
	nc2 := b.nc
	return nc2.Request("orders.create", data, time.Second)
}

// Near miss: the body is also read from the receiver, which the call in
// between refills.
func (b *localBus) requestHeld(next []byte) (*nats.Msg, error) { // want requestHeld:`sends via \(\*nats\.Conn\)\.Request`
	nc := b.nc
	data := b.buf
	msg, err := nc.Request("orders.create", data, time.Second)
	if err == nil {
		return msg, nil
	}
	b.refill(next)
	return b.nc.Request("orders.create", data, time.Second)
}

// Near miss: what the call in between refills is the body, sent from the
// receiver the connection was copied from.
func (b *localBus) requestBuf(next []byte) (*nats.Msg, error) { // want requestBuf:`sends via \(\*nats\.Conn\)\.Request`
	nc := b.nc
	msg, err := nc.Request("orders.create", b.buf, time.Second)
	if err == nil {
		return msg, nil
	}
	b.refill(next)
	return b.nc.Request("orders.create", b.buf, time.Second)
}

type connPool struct{ c chan *nats.Conn }

func (p *connPool) Get() (*nats.Conn, error) { return <-p.c, nil }

// One pooled connection, then another: the same publish again.
func publishPooled(p *connPool, subj string, data []byte) error { // want publishPooled:`sends via \(\*nats\.Conn\)\.Publish`
	c, _ := p.Get()
	if err := c.Publish(subj, data); err == nil { // want `call of \(\*nats\.Conn\)\.Publish is retried on failure by the same send at line 92`
		return nil
	}
	c2, _ := p.Get()
	return c2.Publish(subj, data)
}
