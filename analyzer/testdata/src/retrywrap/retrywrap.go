// Package retrywrap retries sends made through functions of another // want package:"uses nats.go"
// package, known to send by their facts.
package retrywrap

import (
	"context"
	"log"

	"github.com/nats-io/nats.go"

	"wrappers"
)

func viaFact(nc *nats.Conn) error { // want viaFact:`sends via shim.Publish`
	var err error
	for i := 0; i < 3; i++ {
		if err = wrappers.NotifyTwice(nc); err == nil { // want `call of wrappers.NotifyTwice \(via shim.Publish\) is retried on failure`
			return nil
		}
	}
	return err
}

func viaMethod(ctx context.Context, c *wrappers.Client) *nats.Msg { // want viaMethod:`sends via \(\*shim.Client\).Request`
	for {
		reply, err := c.Call(ctx) // want `call of \(\*wrappers\.Client\)\.Call \(via \(\*shim\.Client\)\.Request\) is retried on failure: it may have run; use a fixed shim\.OperationID the responder de-duplicates, and Attempts`
		if err != nil {
			log.Print(err)
			continue
		}
		return reply
	}
}

func viaGeneric(nc *nats.Conn) { // want viaGeneric:`sends via shim.Publish`
	for wrappers.Generic(nc, 1) != nil { // want `call of wrappers.Generic \(via shim.Publish\) is retried on failure`
	}
}

// Near miss: Subscribe does not send when called.
func notASend(nc *nats.Conn) {
	for wrappers.Subscribe(nc) != nil {
	}
}
