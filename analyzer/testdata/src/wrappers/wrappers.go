// Package wrappers sends through helper functions that other packages call. // want package:"uses nats.go"
package wrappers

import (
	"context"

	"github.com/nats-io/nats.go"
	"github.com/natssend/natssend/shim"
)

// Notify sends directly.
func Notify(nc *nats.Conn, subject string) error { // want Notify:`sends via shim.Publish`
	return shim.Publish(nc, subject, nil)
}

// NotifyTwice sends through Notify, declared above it.
func NotifyTwice(nc *nats.Conn) error { // want NotifyTwice:`sends via shim.Publish`
	if err := Notify(nc, "a"); err != nil {
		return err
	}
	return notifyLater(nc)
}

// notifyLater sends through a function declared below it.
func notifyLater(nc *nats.Conn) error { // want notifyLater:`sends via shim.Publish`
	return deepest(nc)
}

func deepest(nc *nats.Conn) error { // want deepest:`sends via shim.Publish`
	return shim.Publish(nc, "z", nil)
}

// Client wraps a shim client.
type Client struct {
	c *shim.Client
}

// Call sends through a method.
func (c *Client) Call(ctx context.Context) (*nats.Msg, error) { // want Call:`sends via \(\*shim.Client\).Request`
	return c.c.Request(ctx, "svc", nil)
}

// Subscribe only sends from a handler, not when called: no fact.
func Subscribe(nc *nats.Conn) error {
	_, err := nc.Subscribe("a", func(m *nats.Msg) {
		_ = shim.Respond(m, nil, nil)
	})
	return err
}

// Generic sends through a generic function.
func Generic[T any](nc *nats.Conn, v T) error { // want Generic:`sends via shim.Publish`
	return Notify(nc, "g")
}
