// Package customretry declares its own retry helper, configured in the test; // want package:"uses nats.go"
// the default helpers are not configured there.
package customretry

import (
	backoff "github.com/cenkalti/backoff/v4"
	"github.com/nats-io/nats.go"
	"github.com/natssend/natssend/shim"
)

func Do(f func() error) error { return f() }

// Retrier is a helper with methods, configured in each spelling.
type Retrier struct{ n int }

func (r *Retrier) Do(f func() error) error    { return f() }
func (r Retrier) Run(f func() error) error    { return f() }
func (r *Retrier) Again(f func() error) error { return f() }
func (r *Retrier) Other(f func() error) error { return f() }

func use(nc *nats.Conn) {
	_ = Do(func() error {
		return shim.Publish(nc, "a", nil) // want `call of shim.Publish is retried on failure by customretry.Do`
	})
	r := &Retrier{n: 3}
	_ = r.Do(func() error {
		return shim.Publish(nc, "a", nil) // want `call of shim.Publish is retried on failure by \(\*customretry.Retrier\).Do`
	})
	_ = r.Run(func() error {
		return shim.Publish(nc, "a", nil) // want `retried on failure by \(customretry.Retrier\).Run`
	})
	_ = r.Again(func() error {
		return shim.Publish(nc, "a", nil) // want `retried on failure by \(\*customretry.Retrier\).Again`
	})
	_ = r.Do(func() error {
		_ = shim.Publish(nc, "cleanup", nil) // its error is discarded: not judged
		shim.Publish(nc, "cleanup", nil)     // nor here
		return shim.Publish(nc, "a", nil)    // want `retried on failure by \(\*customretry.Retrier\).Do`
	})
	_ = r.Other(func() error {
		return shim.Publish(nc, "a", nil) // not configured
	})
	_ = backoff.Retry(func() error {
		return shim.Publish(nc, "a", nil) // not configured in this test
	}, backoff.NewExponentialBackOff())
}
