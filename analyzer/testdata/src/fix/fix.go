package fix // want package:"uses nats.go"

import (
	"github.com/nats-io/nats.go"
)

type service struct {
	*nats.Conn
}

func sends(nc *nats.Conn, m *nats.Msg, s *service, v nats.Conn, subj string, data []byte) { // want sends:`sends via \(\*nats.Conn\).Publish`
	_ = nc.Publish(subj, data) // want `raw \(\*nats.Conn\).Publish`
	_ = nc.PublishMsg(m)       // want `raw \(\*nats.Conn\).PublishMsg`
	_ = m.Respond(data)        // want `raw \(\*nats.Msg\).Respond`
	_ = s.Publish(subj, data)  // want `raw \(\*nats.Conn\).Publish`
	if err := m.Respond(       // want `raw \(\*nats.Msg\).Respond`
		data, // a multi-line call with a trailing comma
	); err != nil {
		return
	}
	go nc.Publish(subj, data) // want `raw \(\*nats.Conn\).Publish`

	// No mechanical fix for these.
	_ = v.Publish(subj, data) // want `raw \(\*nats.Conn\).Publish`
	f := nc.Publish           // want `raw \(\*nats.Conn\).Publish taken as a function value`
	_ = f
	_, _ = nc.Request(subj, data, 0) // want `raw \(\*nats\.Conn\)\.Request can be replayed after its timeout and is not size-capped: use \(\*shim\.Client\)\.Request`
	_ = m.RespondMsg(m)              // want `raw \(\*nats.Msg\).RespondMsg`
}
