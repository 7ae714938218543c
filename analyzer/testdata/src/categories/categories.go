// Package categories is checked with only the rawsend category enabled. // want package:"uses nats.go"
package categories

import (
	"log"

	"github.com/nats-io/nats.go"
	"github.com/natssend/natssend/shim"
)

func retried(nc *nats.Conn) { // want retried:`sends via shim.Publish`
	//natssend:reviewed retry: meant for the disabled retry check: not unused
	for shim.Publish(nc, "a", nil) != nil {
	}
	//natssend:reviewed a plain directive never covers a retry // want `unused //natssend:reviewed directive`
	for shim.Publish(nc, "b", nil) != nil {
	}
	_, _ = nats.Connect("x") //natssend:reviewed meant for the disabled reconnectbuf check
	_, _ = nats.Connect("x")
	_ = nc.Publish("a", nil) // want `raw \(\*nats.Conn\).Publish`
	log.Print("x")           //natssend:reviewed still unused // want `unused //natssend:reviewed directive`
}
