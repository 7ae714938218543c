package realcode

import (
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// bridge keeps one connection and dials a new one when it breaks, as
// connectors and event buses do.
type bridge struct {
	mu  sync.Mutex
	url string
	nc  *nats.Conn
}

func (b *bridge) reconnect() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.nc != nil {
		b.nc.Close()
	}
	nc, err := nats.Connect(b.url, nats.ReconnectBufSize(-1))
	if err != nil {
		return err
	}
	b.nc = nc
	return nil
}

// Reconnect on any error, then the same request again through the new
// connection: the first may have run.
func (b *bridge) call(subj string, data []byte) (*nats.Msg, error) { // want call:`sends via \(\*nats\.Conn\)\.Request`
	msg, err := b.nc.Request(subj, data, time.Second) // want `call of \(\*nats\.Conn\)\.Request is retried on failure by the same send at line 41`
	if err != nil {
		if rerr := b.reconnect(); rerr != nil {
			return nil, rerr
		}
		return b.nc.Request(subj, data, time.Second)
	}
	return msg, nil
}

// A request's ErrConnectionClosed proves nothing: the connection can close
// while the request waits for its reply, after it went out.
func (b *bridge) callOnClosed(subj string, data []byte) (*nats.Msg, error) { // want callOnClosed:`sends via \(\*nats\.Conn\)\.Request`
	msg, err := b.nc.Request(subj, data, time.Second) // want `call of \(\*nats\.Conn\)\.Request is retried on failure by the same send at line 54`
	if errors.Is(err, nats.ErrConnectionClosed) {
		if rerr := b.reconnect(); rerr != nil {
			return nil, rerr
		}
		return b.nc.Request(subj, data, time.Second)
	}
	return msg, err
}

// Near miss: a publish re-sent only on ErrConnectionClosed, which nats.go's
// publish returns before writing anything.
func (b *bridge) emit(subj string, data []byte) error { // want emit:`sends via \(\*nats\.Conn\)\.Publish`
	err := b.nc.Publish(subj, data)
	if err == nats.ErrConnectionClosed {
		if rerr := b.reconnect(); rerr != nil {
			return rerr
		}
		return b.nc.Publish(subj, data)
	}
	return err
}

// A publish re-sent on any error after a reconnect: a flush error or a
// timeout may come after the write.
func (b *bridge) emitAny(subj string, data []byte) error { // want emitAny:`sends via \(\*nats\.Conn\)\.Publish`
	if err := b.nc.Publish(subj, data); err != nil { // want `call of \(\*nats\.Conn\)\.Publish is retried on failure by the same send at line 79`
		if rerr := b.reconnect(); rerr != nil {
			return rerr
		}
		return b.nc.Publish(subj, data)
	}
	return nil
}

type pool struct {
	conn *nats.Conn
	buf  []byte
}

func (p *pool) refreshConn() { p.conn, _ = nats.Connect("nats://x", nats.ReconnectBufSize(-1)) }

func (p *pool) fill(data []byte) { p.buf = append(p.buf[:0], data...) }

// Through a refreshed connection, in a loop.
func (p *pool) send(subj string, data []byte) error { // want send:`sends via \(\*nats\.Conn\)\.Request`
	for i := 0; i < 3; i++ {
		if _, err := p.conn.Request(subj, data, time.Second); err == nil { // want `call of \(\*nats\.Conn\)\.Request is retried on failure`
			return nil
		}
		p.refreshConn()
	}
	return errors.New("no reply")
}

// Near miss: the call between the sends changes the body, which is held
// by the same receiver.
func (p *pool) sendBuf(subj string, next []byte) error { // want sendBuf:`sends via \(\*nats\.Conn\)\.Request`
	if _, err := p.conn.Request(subj, p.buf, time.Second); err == nil {
		return nil
	}
	p.fill(next)
	_, err := p.conn.Request(subj, p.buf, time.Second)
	return err
}

// Near miss: the body is read from the receiver that the call in between
// refills.
func (p *pool) sendHeld(subj string, next []byte) error { // want sendHeld:`sends via \(\*nats\.Conn\)\.Request`
	data := p.buf
	if _, err := p.conn.Request(subj, data, time.Second); err == nil {
		return nil
	}
	p.fill(next) // refills data's array in place
	_, err := p.conn.Request(subj, data, time.Second)
	return err
}
