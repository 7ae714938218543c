// Package wrap stands for a project's own sized NATS wrapper. The fixture's
// configuration lists it in shim-packages, so its raw send is not reported.
package wrap

import "github.com/nats-io/nats.go"

// Publish publishes data on subject.
func Publish(nc *nats.Conn, subject string, data []byte) error {
	return nc.Publish(subject, data)
}
