package app

import (
	"delegation"

	"github.com/nats-io/nats.go"
)

// testkube's api-server and its tests: the bus connection with and
// without the caller's ReconnectBufSize(-1).
func busConnections(url string) error {
	if _, err := delegation.NewBusConnection(url); err != nil { // want `call of NewBusConnection connects without nats.ReconnectBufSize\(-1\)`
		return err
	}
	if _, err := delegation.NewBusConnection(url, nats.ReconnectBufSize(-1)); err != nil {
		return err
	}
	if _, err := delegation.NewPlainConnection(url, nats.MaxReconnects(3)); err != nil { // want `call of NewPlainConnection connects without nats.ReconnectBufSize\(-1\)`
		return err
	}
	_, err := delegation.NewQuietConnection(url)
	return err
}
