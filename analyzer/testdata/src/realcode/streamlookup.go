package realcode

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// emit looks the stream up with a raw request, then publishes to it: a
// JetStream publish, which a fixed message ID de-duplicates, whatever
// else the function sends.
func emit(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, data []byte) error { // want emit:`sends via \(jetstream.Publisher\).Publish`
	if _, err := nc.Request("$JS.API.STREAM.INFO.EVENTS", nil, time.Second); err != nil {
		return err
	}
	_, err := js.Publish(ctx, "events.created", data)
	return err
}

func emitAll(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, data []byte) error { // want emitAll:`sends via \(jetstream.Publisher\).Publish`
	var err error
	for i := 0; i < 3; i++ {
		if err = emit(ctx, nc, js, data); err == nil { // want `call of emit \(via \(jetstream.Publisher\).Publish\) is retried on failure: it may be stored; fix its ID with jetstream.WithMsgID`
			return nil
		}
	}
	return err
}
