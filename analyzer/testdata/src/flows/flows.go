// Package flows hides nats.go behind small interfaces, the way production // want package:"uses nats.go"
// code does for testability.
package flows

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/natssend/natssend/shim"
)

// Publisher is what the order service needs from NATS.
type Publisher interface {
	Publish(subject string, data []byte) error
}

// Flusher has no send.
type Flusher interface {
	Flush() error
}

// Streamer is a JetStream publisher of the service's own.
type Streamer interface {
	Publish(ctx context.Context, subject string, payload []byte, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error)
}

type OrderService struct {
	pub   Publisher
	flush Flusher
}

// NewOrderService stores the connection as a Publisher: its Publish is a
// raw send, chosen here.
func NewOrderService(nc *nats.Conn) *OrderService {
	return &OrderService{
		pub:   nc, // want `\*nats\.Conn flows into Publisher, whose Publish is raw \(\*nats\.Conn\)\.Publish, not checked where it is called: wrap it in a type whose Publish calls shim\.Publish`
		flush: nc,
	}
}

func (s *OrderService) Created(id string) error {
	return s.pub.Publish("orders.created", []byte(id))
}

// shimPublisher puts the shim behind the interface: not reported.
type shimPublisher struct{ nc *nats.Conn }

func (p shimPublisher) Publish(subject string, data []byte) error { // want Publish:`sends via shim\.Publish`
	return shim.Publish(p.nc, subject, data)
}

func NewSafeOrderService(nc *nats.Conn) *OrderService {
	return &OrderService{pub: shimPublisher{nc}, flush: nc}
}

func use(p Publisher) {}

func wire(nc *nats.Conn, js jetstream.JetStream, out chan<- Publisher) (Publisher, Streamer) {
	var p Publisher = nc    // want `\*nats.Conn flows into Publisher`
	use(nc)                 // want `\*nats.Conn flows into Publisher`
	use(Publisher(nc))      // want `\*nats.Conn flows into Publisher`
	list := []Publisher{nc} // want `\*nats.Conn flows into Publisher`
	out <- nc               // want `\*nats.Conn flows into Publisher`
	var f Flusher = nc
	_, _, _ = p, list, f
	//natssend:reviewed fixture: the test double boundary
	use(nc)
	return nc, js // want `\*nats.Conn flows into Publisher` `jetstream.JetStream flows into Streamer, whose Publish is raw \(jetstream.Publisher\).Publish`
}

// Calls through an interface whose value is provably a *nats.Conn count
// as sends for the retry check.
func retryThroughInterface(nc *nats.Conn, data []byte) error {
	var p Publisher
	p = nc // want `\*nats.Conn flows into Publisher`
	for i := 0; i < 3; i++ {
		if err := p.Publish("audit", data); err == nil { // want `call of \(Publisher\).Publish \(via \(\*nats.Conn\).Publish\) is retried on failure`
			return nil
		}
	}
	return errors.New("gave up")
}

// Either value the interface may hold sends (the shim-backed publisher,
// the connection): a retry whichever it is.
func retryThroughEither(nc *nats.Conn, safe bool, data []byte) error {
	var p Publisher = shimPublisher{nc}
	if !safe {
		p = nc // want `\*nats.Conn flows into Publisher`
	}
	for i := 0; i < 3; i++ {
		if err := p.Publish("audit", data); err == nil { // want `call of \(Publisher\).Publish \(via shim.Publish\) is retried on failure`
			return nil
		}
	}
	return errors.New("gave up")
}

// The field holds the connection or the shim-backed publisher
// (NewSafeOrderService): both send, so this is a retry either way.
func (s *OrderService) retryCreated(id string) error {
	for {
		if err := s.pub.Publish("orders.created", []byte(id)); err == nil { // want `call of \(Publisher\).Publish \(via \(\*nats.Conn\).Publish\) is retried on failure`
			return nil
		}
		time.Sleep(time.Second)
	}
}

type notifier struct {
	send func(subject string, data []byte) error
}

func newNotifier(nc *nats.Conn) *notifier {
	return &notifier{send: nc.Publish} // want `raw \(\*nats.Conn\).Publish taken as a function value`
}

// A function field only ever holding a send method value.
func (n *notifier) notify(data []byte) {
	for n.send("alerts", data) != nil { // want `call of send is retried on failure`
		time.Sleep(time.Second)
	}
}

type auditor struct{ pub Publisher }

func newAuditor(nc *nats.Conn) auditor {
	return auditor{pub: nc} // want `\*nats.Conn flows into Publisher`
}

// An unexported field only ever holding a *nats.Conn.
func (a auditor) record(entry []byte) error {
	var err error
	for i := 0; i < 3; i++ {
		if err = a.pub.Publish("audit", entry); err == nil { // want `call of \(Publisher\).Publish \(via \(\*nats.Conn\).Publish\) is retried on failure`
			return nil
		}
	}
	return err
}
