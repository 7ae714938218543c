package audit // want package:"uses nats.go"

import "github.com/nats-io/nats.go"

func audited(nc *nats.Conn, m *nats.Msg) { // want audited:`sends via \(\*nats.Conn\).Publish`
	//natssend:reviewed heartbeat, 8 bytes
	_ = nc.Publish("hb", nil) // want `reviewed raw \(\*nats.Conn\).Publish \(rawsend\): heartbeat, 8 bytes`

	//natssend:reviewed retry: idempotent consumer on the other side
	for nc.Publish("a", nil) != nil { // want `reviewed raw \(\*nats.Conn\).Publish \(rawsend, retry\): idempotent consumer on the other side`
	}

	//natssend:reviewed sized: 1 byte
	for nc.Publish("a", []byte("x")) != nil { // want `reviewed raw \(\*nats.Conn\).Publish \(rawsend\): sized: 1 byte` `call of \(\*nats.Conn\).Publish is retried on failure`
	}

	//natssend:reviewed // want `needs a reason`
	_ = m.Respond(nil) // want `reviewed raw \(\*nats.Msg\).Respond \(rawsend\): \(no reason given\)`

	//natssend:reviewed legacy sidecar, removed in Q3
	_, _ = nats.Connect("x") // want `reviewed nats.Connect \(reconnectbuf\): legacy sidecar, removed in Q3`

	_ = nc.Publish("b", nil) // want `raw \(\*nats.Conn\).Publish bypasses`
}
