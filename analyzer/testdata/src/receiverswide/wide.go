// Package receiverswide receives what another service claim-checks: it // want package:"uses nats.go"
// does not import claimcheck, so only the module-wide setting puts the
// receiver check in force here.
package receiverswide

import (
	"github.com/nats-io/nats.go"
)

func Listen(nc *nats.Conn, out chan<- []byte) error {
	_, err := nc.Subscribe("reports", func(m *nats.Msg) { // want `raw \(\*nats.Conn\).Subscribe callback reads the message`
		out <- m.Data
	})
	return err
}
