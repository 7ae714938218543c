// Package retryorder has retry helpers built on each other. // want package:"uses nats.go"
//
// Some are found in the same sweep: the parameters they retry must not
// depend on the order the analyzer visits them in.
package retryorder

import (
	"time"

	"github.com/nats-io/nats.go"
)

// attempt is the package's retry loop.
func attempt(n int, op func() error) (err error) { // want attempt:`retries parameter 1`
	for i := 0; i < n; i++ {
		if err = op(); err == nil {
			return nil
		}
		time.Sleep(time.Duration(i) * 100 * time.Millisecond)
	}
	return err
}

// withRetries is attempt with the package's default count.
func withRetries(op func() error) error { return attempt(3, op) } // want withRetries:`retries parameter 0`

// syncBoth writes a record, then its index entry, each with retries: the
// first through withRetries, found in the same sweep as syncBoth.
func syncBoth(record, index func() error) error { // want syncBoth:`retries parameters \[0 1\]`
	if err := withRetries(record); err != nil {
		return err
	}
	return attempt(5, index)
}

// writeThenNotify retries the write, and sends the notice once.
func writeThenNotify(write, notify func() error) error { // want writeThenNotify:`retries parameter 0`
	if err := withRetries(write); err != nil {
		return err
	}
	return notify()
}

func saveOrder(nc *nats.Conn, order []byte) error {
	return syncBoth(
		func() error { return nc.Publish("orders.record", order) }, // want `call of \(\*nats.Conn\).Publish is retried on failure by retryorder.syncBoth`
		func() error { return nc.Publish("orders.index", order) },  // want `call of \(\*nats.Conn\).Publish is retried on failure by retryorder.syncBoth`
	)
}

// Near miss: the notice goes out once.
func saveAndAnnounce(nc *nats.Conn, order []byte) error {
	return writeThenNotify(
		func() error { return nc.Publish("orders.record", order) }, // want `call of \(\*nats.Conn\).Publish is retried on failure by retryorder.writeThenNotify`
		func() error { return nc.Publish("orders.created", order) },
	)
}
