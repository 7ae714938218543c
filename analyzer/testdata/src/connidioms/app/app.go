// Package app uses connidioms' constructor from another package: its // want package:"uses nats.go"
// calls are the connects, judged through a fact.
package app

import (
	"connidioms"

	"github.com/nats-io/nats.go"
)

func Run() error {
	c := connidioms.NewClient("nats://a", nats.Name("app")) // want `call of NewClient connects without nats.ReconnectBufSize\(-1\)`
	if err := c.Connect(); err != nil {
		return err
	}
	safe := connidioms.NewClient("nats://b", nats.Name("app"), nats.ReconnectBufSize(-1))
	return safe.Connect()
}
