package retry // want package:"uses nats.go"

import (
	"context"
	"log"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A batch restarted from its first message on any failure: the message
// that failed (and those before it) are sent again.
func publishBatch(ctx context.Context, js jetstream.JetStream, batch []*nats.Msg) error { // want publishBatch:`sends via \(jetstream.Publisher\).PublishMsg`
	var err error
restart:
	for attempt := 0; attempt < 5; attempt++ {
		for _, m := range batch {
			if _, err = js.PublishMsg(ctx, m); err != nil { // want `call of \(jetstream.Publisher\).PublishMsg is retried on failure: it may be stored`
				log.Printf("batch failed at %s: %v, starting over", m.Subject, err)
				time.Sleep(time.Second)
				continue restart
			}
		}
		return nil
	}
	return err
}

// Near miss: a failure skips to the next message.
func publishEach(nc *nats.Conn, batch []*nats.Msg) { // want publishEach:`sends via \(\*nats.Conn\).PublishMsg`
	for _, m := range batch {
		if err := nc.PublishMsg(m); err != nil {
			log.Printf("skipping %s: %v", m.Subject, err)
			continue
		}
	}
}

// Near miss: the next round sends another batch.
func publishRounds(nc *nats.Conn, next func() []*nats.Msg) { // want publishRounds:`sends via \(\*nats.Conn\).PublishMsg`
round:
	for {
		batch := next()
		for _, m := range batch {
			if err := nc.PublishMsg(m); err != nil {
				continue round
			}
		}
	}
}
