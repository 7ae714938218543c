// Package exempt is configured as a shim package: raw sends and connects // want package:"uses nats.go"
// are its job.
package exempt

import "github.com/nats-io/nats.go"

func Connect(url string) (*nats.Conn, error) { return nats.Connect(url) }

func Publish(nc *nats.Conn, s string, d []byte) error { return nc.Publish(s, d) } // want Publish:`sends via \(\*nats.Conn\).Publish`

func Reviewed(nc *nats.Conn) error { // want Reviewed:`sends via \(\*nats.Conn\).Publish`
	return nc.Publish("a", nil) //natssend:reviewed not needed here, but not an unused directive either
}

// The retry check still applies.
func Retry(nc *nats.Conn) { // want Retry:`sends via \(\*nats.Conn\).Publish`
	for nc.Publish("a", nil) != nil { // want `call of \(\*nats.Conn\).Publish is retried on failure`
	}
}
