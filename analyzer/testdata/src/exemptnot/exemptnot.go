// Package exemptnot shares a prefix with exempt but is not below it. // want package:"uses nats.go"
package exemptnot

import "github.com/nats-io/nats.go"

func Publish(nc *nats.Conn) error { return nc.Publish("a", nil) } // want Publish:`sends via \(\*nats.Conn\).Publish` `raw \(\*nats.Conn\).Publish`
