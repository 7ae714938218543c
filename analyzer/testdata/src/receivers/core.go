// Package receivers uses claim checks (it imports claimcheck), so its raw // want package:"uses nats.go"
// receive paths that read a message's body are reported.
package receivers

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/natssend/natssend/claimcheck"
)

type Order struct {
	ID    string `json:"id"`
	Items []byte `json:"items"`
}

type service struct {
	nc     *nats.Conn
	store  *claimcheck.Store
	orders chan Order
}

// Start is the shape of most services: one subscription per subject, the
// handler a method value.
func (s *service) Start() error {
	if _, err := s.nc.QueueSubscribe("orders.created", "workers", s.handleOrder); err != nil { // want `raw \(\*nats.Conn\).QueueSubscribe callback reads the message without resolving claim checks, which are in use here: a claim-checked message arrives with an empty body; use \(\*claimcheck.Store\).Subscribe or QueueSubscribe`
		return err
	}
	// The audit trail only counts messages: it never reads a body.
	if _, err := s.nc.Subscribe("orders.>", func(m *nats.Msg) {
		log.Printf("seen %s (%d header keys)", m.Subject, len(m.Header))
	}); err != nil {
		return err
	}
	// Resolved by hand: fine.
	_, err := s.nc.Subscribe("orders.bulk", func(m *nats.Msg) {
		data, err := s.store.Resolve(context.Background(), m)
		if err != nil {
			log.Printf("bulk order: %v", err)
			return
		}
		s.decode(data)
	})
	return err
}

func (s *service) handleOrder(m *nats.Msg) {
	var o Order
	if err := decodeOrder(m, &o); err != nil {
		log.Printf("bad order on %s: %v", m.Subject, err)
		return
	}
	s.orders <- o
}

// decodeOrder reads the body two calls away from the subscription.
func decodeOrder(m *nats.Msg, o *Order) error {
	return json.Unmarshal(m.Data, o)
}

func (s *service) decode(data []byte) {
	var o Order
	_ = json.Unmarshal(data, &o)
	s.orders <- o
}

// Handlers that recognise a claim check and hand it elsewhere handle it.
func (s *service) forward() error {
	_, err := s.nc.Subscribe("orders.forward", func(m *nats.Msg) {
		if claimcheck.IsClaimCheck(m) {
			s.forwardLater(m)
			return
		}
		s.decode(m.Data)
	})
	return err
}

func (s *service) forwardLater(m *nats.Msg) {}

// A handler kept in a variable first.
func listen(nc *nats.Conn, out chan<- []byte) (*nats.Subscription, error) {
	cb := func(m *nats.Msg) {
		payload := m.Data
		out <- payload
	}
	return nc.Subscribe("telemetry", cb) // want `raw \(\*nats.Conn\).Subscribe callback reads the message`
}

// Channel subscriptions: the messages are read from the channel.
func drain(nc *nats.Conn, process func([]byte)) error {
	ch := make(chan *nats.Msg, 64)
	sub, err := nc.ChanSubscribe("events", ch) // want `raw \(\*nats.Conn\).ChanSubscribe: the message it hands over is read without resolving claim checks`
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	go func() {
		for m := range ch {
			process(m.Data)
		}
	}()
	return nil
}

// A synchronous subscription read in a loop.
func poll(nc *nats.Conn, handle func(string, []byte)) error {
	sub, err := nc.SubscribeSync("jobs")
	if err != nil {
		return err
	}
	for {
		msg, err := sub.NextMsg(time.Second) // want `raw \(\*nats.Subscription\).NextMsg: the message it hands over is read`
		if err == nats.ErrTimeout {
			continue
		}
		if err != nil {
			return err
		}
		handle(msg.Subject, msg.Data)
	}
}

// A reviewed control subject.
func control(nc *nats.Conn) {
	//natssend:reviewed control commands are a few bytes, never claim-checked
	nc.Subscribe("control", func(m *nats.Msg) { log.Print(string(m.Data)) })
}

// Legacy JetStream push subscription.
func legacy(js nats.JetStreamContext, st *claimcheck.Store) error {
	_, err := js.Subscribe("ORDERS.*", func(m *nats.Msg) { // want `raw nats.JetStream.Subscribe callback reads the message .*call \(\*claimcheck.Store\).Resolve on each message`
		var o Order
		if json.Unmarshal(m.Data, &o) == nil {
			m.Ack()
		}
	})
	return err
}

// Writing a message is not reading one.
func echo(nc *nats.Conn) {
	nc.Subscribe("ping", func(m *nats.Msg) {
		out := nats.NewMsg(m.Reply)
		out.Data = []byte("pong")
		_ = out
	})
}

// Subjects no claim check is sent to: the server's advisories, and
// inboxes that receive the replies of raw requests.
type statz struct {
	nc    *nats.Conn
	reply string
	seen  map[string][]byte
}

func (sc *statz) start() error {
	sc.reply = sc.nc.NewRespInbox()
	if _, err := sc.nc.Subscribe(sc.reply+".*", sc.handleResponse); err != nil {
		return err
	}
	_, err := sc.nc.Subscribe("$JS.EVENT.ADVISORY.>", sc.handleResponse)
	return err
}

func (sc *statz) handleResponse(m *nats.Msg) { sc.seen[m.Subject] = m.Data }

func (sc *statz) ask(subj string) ([]byte, error) { // want ask:`sends via \(\*nats.Conn\).PublishRequest`
	inbox := nats.NewInbox()
	sub, err := sc.nc.SubscribeSync(inbox)
	if err != nil {
		return nil, err
	}
	defer sub.Unsubscribe()
	if err := sc.nc.PublishRequest(subj, inbox, nil); err != nil {
		return nil, err
	}
	msg, err := sub.NextMsg(time.Second)
	if err != nil {
		return nil, err
	}
	return msg.Data, nil
}

// Advisories: the subject is the server's by default, or an imported
// stream of them.
func advisories(nc *nats.Conn, external string, out chan<- []byte) error {
	subject := "$JS.EVENT.ADVISORY.>"
	if external != "" {
		subject = external
	}
	_, err := nc.Subscribe(subject, func(m *nats.Msg) { out <- m.Data })
	return err
}

// A publisher's acknowledgements come to an inbox made in its
// constructor.
type fastPublisher struct {
	nc             *nats.Conn
	ackInboxPrefix string
	acks           chan []byte
}

func newFastPublisher(nc *nats.Conn) *fastPublisher {
	return &fastPublisher{nc: nc, ackInboxPrefix: nc.NewInbox(), acks: make(chan []byte, 1)}
}

func (fp *fastPublisher) listen() error {
	_, err := fp.nc.Subscribe(fmt.Sprintf("%s.>", fp.ackInboxPrefix), func(m *nats.Msg) { fp.acks <- m.Data })
	return err
}

// A subscription the caller made (on a trace subject of its choosing) is
// not judged.
func traces(sub *nats.Subscription, out chan<- []byte) error {
	for {
		msg, err := sub.NextMsg(time.Second)
		if err != nil {
			return err
		}
		out <- msg.Data
	}
}
