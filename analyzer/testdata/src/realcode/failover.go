package realcode

import (
	"log"
	"time"

	"github.com/nats-io/nats.go"
)

// Failover without a loop: the same request to a backup connection after
// the primary failed. The primary may have run it.
func createOrder(primary, backup *nats.Conn, order []byte) (*nats.Msg, error) { // want createOrder:`sends via \(\*nats\.Conn\)\.Request`
	msg, err := primary.Request("orders.create", order, 2*time.Second) // want `call of \(\*nats\.Conn\)\.Request is retried on failure by the same send at line 17`
	if err == nil {
		return msg, nil
	}
	return backup.Request("orders.create", order, 2*time.Second)
}

// The same through a function variable, tried twice.
func register(nc *nats.Conn, id []byte) error {
	ask := func() error {
		_, err := nc.Request("svc.register", id, time.Second)
		return err
	}
	if err := ask(); err == nil { // want `call of ask \(via \(\*nats\.Conn\)\.Request\) is retried on failure by the same send at line 29`
		return nil
	}
	return ask()
}

// Near miss: mirroring to both connections whatever the first did.
func mirror(primary, backup *nats.Conn, event []byte) error { // want mirror:`sends via \(\*nats\.Conn\)\.Publish`
	if err := primary.Publish("events", event); err != nil {
		log.Printf("primary: %v", err)
	}
	return backup.Publish("events", event)
}

// Near miss: after a failure, another body goes out (an error notice).
func publishOrNotify(nc *nats.Conn, event []byte) error { // want publishOrNotify:`sends via \(\*nats\.Conn\)\.Publish`
	err := nc.Publish("events", event)
	if err != nil {
		return nc.Publish("events.failed", []byte(err.Error()))
	}
	return nil
}

var seq int

func nextID() string { seq++; return "id-" + string(rune('a'+seq%26)) }

// Near miss: the message ID option is made once, before both attempts,
// so the stream keeps one copy.
func storeEvent(js nats.JetStream, event []byte) error { // want storeEvent:`sends via \(nats\.JetStream\)\.Publish`
	id := nats.MsgId(nextID())
	if _, err := js.Publish("events", event, id); err == nil {
		return nil
	}
	_, err := js.Publish("events", event, id)
	return err
}

// A fresh ID for each attempt protects nothing.
func storeEventFresh(js nats.JetStream, event []byte) error { // want storeEventFresh:`sends via \(nats\.JetStream\)\.Publish`
	for i := 0; i < 3; i++ {
		id := nats.MsgId(nextID())
		if _, err := js.Publish("events", event, id); err == nil { // want `call of \(nats\.JetStream\)\.Publish is retried on failure`
			return nil
		}
	}
	return nil
}

// Near miss: the same, with the ID made before the loop.
func storeEventOnce(js nats.JetStream, event []byte) error { // want storeEventOnce:`sends via \(nats\.JetStream\)\.Publish`
	id := nats.MsgId(nextID())
	for i := 0; i < 3; i++ {
		if _, err := js.Publish("events", event, id); err == nil {
			return nil
		}
	}
	return nil
}

// Two IDs are two messages.
func storeEventTwice(js nats.JetStream, event []byte) error { // want storeEventTwice:`sends via \(nats\.JetStream\)\.Publish`
	if _, err := js.Publish("events", event, nats.MsgId("first")); err == nil { // want `call of \(nats\.JetStream\)\.Publish is retried on failure by the same send at line 91`
		return nil
	}
	_, err := js.Publish("events", event, nats.MsgId("second"))
	return err
}

type startOpts struct{ Encrypt bool }

func encodeOpts(o *startOpts) []byte {
	if o.Encrypt {
		return []byte(`{"encrypt":true}`)
	}
	return []byte(`{}`)
}

func startNode(nc *nats.Conn, o *startOpts) error { // want startNode:`sends via \(\*nats\.Conn\)\.Request`
	_, err := nc.Request("node.start", encodeOpts(o), time.Second)
	return err
}

// The same start asked twice.
func startTwice(nc *nats.Conn) error { // want startTwice:`sends via \(\*nats\.Conn\)\.Request`
	o := &startOpts{Encrypt: true}
	if err := startNode(nc, o); err == nil { // want `call of startNode \(via \(\*nats\.Conn\)\.Request\) is retried on failure by the same send at line 115`
		return nil
	}
	return startNode(nc, o)
}

// Near miss: the second start runs with other options.
func startEitherWay(nc *nats.Conn) error { // want startEitherWay:`sends via \(\*nats\.Conn\)\.Request`
	o := &startOpts{Encrypt: true}
	if err := startNode(nc, o); err == nil {
		return nil
	}
	o.Encrypt = false
	return startNode(nc, o)
}
