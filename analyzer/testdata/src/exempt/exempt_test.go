package exempt_test // want package:"uses nats.go"

import "github.com/nats-io/nats.go"

func helper(nc *nats.Conn) error { return nc.Publish("a", nil) } // want helper:`sends via \(\*nats.Conn\).Publish`
