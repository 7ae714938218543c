package sub // want package:"uses nats.go"

import "github.com/nats-io/nats.go"

func Publish(nc *nats.Conn) error { return nc.Publish("a", nil) } // want Publish:`sends via \(\*nats.Conn\).Publish`
