package app // want package:"uses nats.go"

import (
	"gencode/helper"
	"gencode/retrier"

	"github.com/nats-io/nats.go"
)

func send(nc *nats.Conn, b []byte) {
	_ = retrier.Do(func() error { return nc.Publish("s", b) })
	_ = helper.Do(func() error { return nc.Publish("s", b) }) // want `call of \(\*nats.Conn\).Publish is retried on failure by helper.Do`
}
