// Command relay wires the outbox to JetStream: the conversion of the
// sending implementation into the retried interface happens here.
package main

import (
	"context"
	"log"
	"os"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"ifaceretry/logaudit"
	"ifaceretry/natspub"
	"ifaceretry/outbox"
)

func main() {
	nc, err := nats.Connect(os.Getenv("NATS_URL"), nats.ReconnectBufSize(-1))
	if err != nil {
		log.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		log.Fatal(err)
	}
	relay := outbox.NewRelay(natspub.New(js), logaudit.Logger{L: log.Default()}) // want `\*natspub.JetStream flows into events.Publisher; \(\*outbox.Relay\).Deliver retries its Publish on failure at outbox.go:37: it may be stored; fix its ID with jetstream.WithMsgID`
	if err := relay.Flush(context.Background(), nil); err != nil {
		log.Fatal(err)
	}
	fwd := outbox.NewForwarder(natspub.New(js)) // want `\*natspub.JetStream flows into events.Forwarder; the function literal at line 23 in \(\*outbox.Forwarder\).Start retries its Publish on failure at outbox_forward.go:26: it may be stored; fix its ID with jetstream.WithMsgID`
	fwd.Start(context.Background(), nil)
}
