package receiversfollow

import "github.com/nats-io/nats.go"

// What the check cannot follow is listed with -audit, not passed.

type bus struct {
	nc     *nats.Conn
	onMsg  nats.MsgHandler // set by the bus's users
	handle func(*nats.Msg)
}

func (b *bus) start() error {
	if _, err := b.nc.Subscribe("events", b.onMsg); err != nil { // want `unjudged raw \(\*nats.Conn\).Subscribe: its callback is field onMsg, set where the check cannot follow`
		return err
	}
	_, err := b.nc.Subscribe("tasks", func(m *nats.Msg) { b.handle(m) }) // want `unjudged raw \(\*nats.Conn\).Subscribe: the message goes to b.handle, a function value the check cannot follow`
	return err
}

// Subscribe passes its caller's callback on.
func (b *bus) Subscribe(subj string, cb nats.MsgHandler) (*nats.Subscription, error) {
	return b.nc.Subscribe(subj, cb) // want `unjudged raw \(\*nats.Conn\).Subscribe: its callback comes from cb`
}

// Stream returns the channel of its subscription to its caller.
func (b *bus) Stream(subj string) (<-chan *nats.Msg, error) {
	ch := make(chan *nats.Msg, 64)
	if _, err := b.nc.ChanSubscribe(subj, ch); err != nil { // want `unjudged raw \(\*nats.Conn\).ChanSubscribe: its channel ch leaves the function unread`
		return nil, err
	}
	return ch, nil
}

// The audit trail only counts messages, in a callback of the package: not
// listed.
func (b *bus) count(n *int) error {
	_, err := b.nc.Subscribe("events", func(*nats.Msg) { *n++ })
	return err
}

// handlers picks a registered handler: not followed.
var handlers = map[string]nats.MsgHandler{}

func pick(name string) nats.MsgHandler { return handlers[name] }

func (b *bus) route(name string) error {
	_, err := b.nc.Subscribe("route."+name, pick(name)) // want `unjudged raw \(\*nats.Conn\).Subscribe: its callback is made by pick, which the check cannot follow`
	return err
}
