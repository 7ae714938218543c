package fiximport

import (
	"github.com/nats-io/nats.go"

	shim "fiximport/othershim"
)

func taken(nc *nats.Conn) error { // want taken:`sends via \(\*nats.Conn\).Publish`
	shim.Publish()
	return nc.Publish("a", nil) // want `raw \(\*nats.Conn\).Publish`
}
