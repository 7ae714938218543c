package retry

import (
	"log"
	"time"

	"github.com/nats-io/nats.go"
)

// A retry through mutual recursion: a failed send goes to a recovery
// method that reconnects and calls the send again.
type emitter struct {
	nc  *nats.Conn
	url string
}

func (e *emitter) emit(m *nats.Msg) error { // want emit:`sends via \(\*nats.Conn\).PublishMsg`
	if err := e.nc.PublishMsg(m); err != nil { // want `call of \(\*nats.Conn\).PublishMsg is retried on failure by calling emit again`
		return e.recover(m, err)
	}
	return nil
}

func (e *emitter) recover(m *nats.Msg, cause error) error { // want recover:`sends via \(\*nats.Conn\).PublishMsg`
	log.Printf("emit %s: %v; reconnecting", m.Subject, cause)
	time.Sleep(time.Second)
	nc, err := nats.Connect(e.url)
	if err != nil {
		return err
	}
	e.nc = nc
	return e.emit(m)
}

// Near miss: the recovery sends a dead-letter notice, another message.
type forwarder struct{ nc *nats.Conn }

func (f *forwarder) forward(m *nats.Msg) error { // want forward:`sends via \(\*nats.Conn\).PublishMsg`
	if err := f.nc.PublishMsg(m); err != nil {
		return f.deadLetter(m, err)
	}
	return nil
}

func (f *forwarder) deadLetter(m *nats.Msg, cause error) error { // want deadLetter:`sends via \(\*nats.Conn\).PublishMsg`
	notice := nats.NewMsg("dead." + m.Subject)
	notice.Data = []byte(cause.Error())
	if m.Subject == "dead.>" {
		return cause
	}
	return f.forward(notice)
}
