package receiversfollow // want package:"uses nats.go"

// Receive paths the receiver check follows across variables and methods,
// written like the components that showed them: a pub/sub component whose
// callback variable is wrapped for concurrent delivery, inputs that
// subscribe in Connect and read in Read (a channel subscription, a
// Messages iterator), and, listed with -audit, what it cannot follow.

import (
	"context"
	"errors"
	"log"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/natssend/natssend/claimcheck"
)

var errClosed = errors.New("input closed")

type pubsub struct {
	nc         *nats.Conn
	store      *claimcheck.Store
	queue      string
	concurrent bool
}

// subscribe: the handler variable is assigned twice, the second value
// wrapping the first in a goroutine. The first reads the body: reported.
func (p *pubsub) subscribe(topic string, handler func(ctx context.Context, data []byte) error) error {
	natsHandler := func(m *nats.Msg) {
		if err := handler(context.Background(), m.Data); err != nil {
			log.Printf("%s: %v", topic, err)
		}
	}
	if p.concurrent {
		inner := natsHandler
		natsHandler = func(m *nats.Msg) { go inner(m) }
	}
	_, err := p.nc.QueueSubscribe(topic, p.queue, natsHandler) // want `raw \(\*nats.Conn\).QueueSubscribe callback reads the message without resolving claim checks`
	return err
}

// subscribeResolved: the same shape, the first handler resolving: fine.
func (p *pubsub) subscribeResolved(topic string, handler func(ctx context.Context, data []byte) error) error {
	natsHandler := func(m *nats.Msg) {
		data, err := p.store.Resolve(context.Background(), m)
		if err == nil {
			err = handler(context.Background(), data)
		}
		if err != nil {
			log.Printf("%s: %v", topic, err)
		}
	}
	if p.concurrent {
		inner := natsHandler
		natsHandler = func(m *nats.Msg) { go inner(m) }
	}
	_, err := p.nc.QueueSubscribe(topic, p.queue, natsHandler)
	return err
}

// natsInput subscribes in Connect and reads in Read, through a local copy
// of the channel field: reported at the subscription.
type natsInput struct {
	nc       *nats.Conn
	subject  string
	natsSub  *nats.Subscription
	natsChan chan *nats.Msg
}

func (n *natsInput) Connect(ctx context.Context) error {
	n.natsChan = make(chan *nats.Msg, 64)
	sub, err := n.nc.ChanSubscribe(n.subject, n.natsChan) // want `raw \(\*nats.Conn\).ChanSubscribe: the message it hands over is read without resolving claim checks`
	if err != nil {
		return err
	}
	n.natsSub = sub
	return nil
}

func (n *natsInput) Read(ctx context.Context) ([]byte, error) {
	natsChan := n.natsChan
	select {
	case msg, open := <-natsChan:
		if !open {
			return nil, errClosed
		}
		return msg.Data, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// queued: the callback hands each message to a channel that Run reads.
type queued struct {
	nc   *nats.Conn
	msgs chan *nats.Msg
}

func (q *queued) Start() error {
	_, err := q.nc.Subscribe("jobs", func(m *nats.Msg) { q.msgs <- m }) // want `raw \(\*nats.Conn\).Subscribe callback reads the message without resolving claim checks`
	return err
}

func (q *queued) Run(work func([]byte)) {
	for m := range q.msgs {
		work(m.Data)
	}
}

// jsInput keeps a Messages iterator in a field: reported where Next hands
// the message over.
type jsInput struct {
	cons jetstream.Consumer
	iter jetstream.MessagesContext
}

func (j *jsInput) Connect() error {
	it, err := j.cons.Messages()
	if err != nil {
		return err
	}
	j.iter = it
	return nil
}

func (j *jsInput) Read() ([]byte, error) {
	msg, err := j.iter.Next() // want `raw jetstream.MessagesContext.Next: the message it hands over is read without resolving claim checks`
	if err != nil {
		return nil, err
	}
	return msg.Data(), msg.Ack()
}

// Subscriber makes its handler in a method, as go-kit's transport does:
// the literal it returns is the handler.
type Subscriber struct {
	decode func([]byte) (any, error)
}

// ServeMsg returns the nats.MsgHandler.
func (s Subscriber) ServeMsg(nc *nats.Conn) func(msg *nats.Msg) {
	return func(msg *nats.Msg) {
		if _, err := s.decode(msg.Data); err != nil {
			log.Printf("decode: %v", err)
		}
	}
}

func serve(nc *nats.Conn, s Subscriber) error {
	_, err := nc.QueueSubscribe("svc", "q", s.ServeMsg(nc)) // want `raw \(\*nats.Conn\).QueueSubscribe callback reads the message without resolving claim checks`
	return err
}
