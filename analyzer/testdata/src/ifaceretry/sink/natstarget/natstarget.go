// Package natstarget is the sink plugin that publishes to JetStream. // want package:"uses nats.go"
package natstarget

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"

	"ifaceretry/sink"
)

type target struct {
	js      jetstream.JetStream
	subject string
}

func (t *target) Send(ctx context.Context, key string, value []byte) error { // want Send:`sends via \(jetstream.Publisher\).Publish`
	_, err := t.js.Publish(ctx, t.subject+"."+key, value)
	return err
}

func (t *target) Close() error { return nil }

// Register registers the target publishing under subject.
func Register(js jetstream.JetStream, subject string) {
	sink.Register("nats", &target{js: js, subject: subject}) // want `\*target flows into sink.Target; \(\*sink.Queue\).run retries its Send on failure at sink.go:56: it may be stored; fix its ID with jetstream.WithMsgID`
}
