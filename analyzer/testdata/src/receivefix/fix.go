package receivefix // want package:"uses nats.go"

import (
	"encoding/json"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/natssend/natssend/claimcheck"
)

type Event struct{ Kind string }

type consumer struct {
	nc     *nats.Conn
	cons   jetstream.Consumer
	claims *claimcheck.Store
	events chan Event
}

func (c *consumer) start() error {
	if _, err := c.nc.Subscribe("events", func(m *nats.Msg) { // want `raw \(\*nats.Conn\).Subscribe callback reads the message`
		var e Event
		if json.Unmarshal(m.Data, &e) == nil {
			c.events <- e
		}
	}); err != nil {
		return err
	}
	if _, err := c.nc.QueueSubscribe("events.q", "workers", c.onEvent); err != nil { // want `raw \(\*nats.Conn\).QueueSubscribe callback reads the message`
		return err
	}
	_, err := c.cons.Consume(func(msg jetstream.Msg) { // want `raw jetstream.Consumer.Consume callback reads the message`
		var e Event
		if json.Unmarshal(msg.Data(), &e) == nil {
			c.events <- e
		}
		msg.Ack()
	})
	return err
}

func (c *consumer) onEvent(m *nats.Msg) {
	var e Event
	if json.Unmarshal(m.Data, &e) == nil {
		c.events <- e
	}
}

// Two stores in scope: which one the fix should use is not clear, so no fix.
func two(nc *nats.Conn, a, b *claimcheck.Store, out chan<- []byte) {
	nc.Subscribe("x", func(m *nats.Msg) { out <- m.Data }) // want `raw \(\*nats.Conn\).Subscribe callback reads the message`
}

// A named handler type is not a claimcheck.MsgHandler: no fix.
func named(nc *nats.Conn, st *claimcheck.Store, h nats.MsgHandler, out chan<- []byte) {
	var cb nats.MsgHandler = func(m *nats.Msg) { out <- m.Data }
	nc.Subscribe("y", cb) // want `raw \(\*nats.Conn\).Subscribe callback reads the message`
}
