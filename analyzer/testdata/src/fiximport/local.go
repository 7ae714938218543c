package fiximport // want package:"uses nats.go"

import "github.com/nats-io/nats.go"

func local(nc *nats.Conn, m *nats.Msg) error { // want local:`sends via \(\*nats.Msg\).Respond`
	shim := "a local variable named shim"
	_ = m.Respond([]byte(shim)) // want `raw \(\*nats.Msg\).Respond`
	return nil
}
