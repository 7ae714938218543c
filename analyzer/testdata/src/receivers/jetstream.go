package receivers

import (
	"context"
	"log"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/natssend/natssend/claimcheck"
)

type worker struct {
	cons  jetstream.Consumer
	store *claimcheck.Store
	out   chan []byte
}

func (w *worker) run() (jetstream.ConsumeContext, error) {
	return w.cons.Consume(func(msg jetstream.Msg) { // want `raw jetstream.Consumer.Consume callback reads the message .*use \(\*claimcheck.Store\).Consume or Messages`
		w.out <- msg.Data()
		msg.Ack()
	})
}

// Resolved by hand: fine.
func (w *worker) runResolved(ctx context.Context) (jetstream.ConsumeContext, error) {
	return w.cons.Consume(func(msg jetstream.Msg) {
		data, err := w.store.ResolveJetStream(ctx, msg)
		if err != nil {
			msg.Nak()
			return
		}
		w.out <- data
		msg.Ack()
	})
}

// Acking without reading is fine (a purge worker).
func (w *worker) purge() (jetstream.ConsumeContext, error) {
	return w.cons.Consume(func(msg jetstream.Msg) { log.Print(msg.Subject()); msg.Ack() })
}

// The iterator form, with a handler function.
func (w *worker) iterate() error {
	it, err := w.cons.Messages()
	if err != nil {
		return err
	}
	defer it.Stop()
	for {
		msg, err := it.Next() // want `raw jetstream.MessagesContext.Next: the message it hands over is read`
		if err != nil {
			return err
		}
		w.handle(msg)
	}
}

func (w *worker) handle(msg jetstream.Msg) {
	w.out <- msg.Data()
	msg.Ack()
}

// Batches.
func fetch(ctx context.Context, js jetstream.JetStream, out chan<- []byte) error {
	cons, err := js.Consumer(ctx, "ORDERS", "billing")
	if err != nil {
		return err
	}
	batch, err := cons.Fetch(100) // want `raw jetstream.Consumer.Fetch: the message it hands over is read`
	if err != nil {
		return err
	}
	for msg := range batch.Messages() {
		out <- msg.Data()
		msg.Ack()
	}
	return batch.Error()
}

// claimcheck's own iterator resolves: not a raw receive path.
func (w *worker) iterateResolved() error {
	it, err := w.store.Messages(w.cons)
	if err != nil {
		return err
	}
	msg, err := it.Next()
	if err != nil {
		return err
	}
	w.out <- msg.Data()
	return msg.Ack()
}
