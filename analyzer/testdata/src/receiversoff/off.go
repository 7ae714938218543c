// Package receiverswide receives what another service claim-checks: it // want package:"uses nats.go"
// does not import claimcheck, so without the module-wide setting nothing puts the
// receiver check in force here.
package receiversoff

import (
	"github.com/nats-io/nats.go"
)

func Listen(nc *nats.Conn, out chan<- []byte) error {
	_, err := nc.Subscribe("reports", func(m *nats.Msg) {
		out <- m.Data
	})
	return err
}
