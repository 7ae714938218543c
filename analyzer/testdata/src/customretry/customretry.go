// Package customretry declares its own retry helper, configured in the test;
// the default helpers are not configured there.
package customretry

import (
	backoff "github.com/cenkalti/backoff/v4"
	"github.com/nats-io/nats.go"
	"github.com/natssend/natssend/shim"
)

func Do(f func() error) error { return f() }

func use(nc *nats.Conn) {
	_ = Do(func() error {
		return shim.Publish(nc, "a", nil) // want `call of shim.Publish is retried on failure by customretry.Do`
	})
	_ = backoff.Retry(func() error {
		return shim.Publish(nc, "a", nil) // not configured in this test
	}, backoff.NewExponentialBackOff())
}
