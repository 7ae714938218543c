package fiximport

import (
	sh "github.com/natssend/natssend/shim"

	"github.com/nats-io/nats.go"
)

func renamed(nc *nats.Conn) error { // want renamed:`sends via shim.Publish`
	_ = sh.Publish(nc, "a", nil)
	return nc.Publish("a", nil) // want `raw \(\*nats.Conn\).Publish`
}
