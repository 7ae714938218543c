package realcode

import (
	"errors"

	"github.com/nats-io/nats.go"
)

// encBus is an event bus on a *nats.EncodedConn that dials again when
// the connection is gone, as in-house event buses do.
type encBus struct{ ec *nats.EncodedConn }

func (b *encBus) conn() *nats.EncodedConn { return b.ec }
func (b *encBus) redial() error           { return nil }

// Near miss: re-sent only on ErrConnectionClosed, which EncodedConn's
// Publish returns, after encoding, from the same publish as Conn's,
// before writing anything.
func (b *encBus) emitClosed(topic string, ev any) error { // want emitClosed:`sends via \(\*nats\.EncodedConn\)\.Publish`
	err := b.conn().Publish(topic, ev)
	if err == nil {
		return nil
	}
	if !errors.Is(err, nats.ErrConnectionClosed) {
		return err
	}
	if rerr := b.redial(); rerr != nil {
		return rerr
	}
	return b.conn().Publish(topic, ev)
}

// On any error: the first may be out already.
func (b *encBus) emitAny(topic string, ev any) error { // want emitAny:`sends via \(\*nats\.EncodedConn\)\.Publish`
	err := b.conn().Publish(topic, ev) // want `call of \(\*nats\.EncodedConn\)\.Publish is retried on failure by the same send at line 42`
	if err == nil {
		return nil
	}
	if rerr := b.redial(); rerr != nil {
		return rerr
	}
	return b.conn().Publish(topic, ev)
}
