package delegation

import "github.com/nats-io/nats.go"

// attempt calls f until it succeeds, n times at most, as retry-go's
// Do does.
func attempt[T any](n int, f func() (T, error)) (T, error) { // want attempt:"retries parameter 1"
	var v T
	var err error
	for range n {
		if v, err = f(); err == nil {
			return v, nil
		}
	}
	return v, err
}

// NewBusConnection connects, retried, inside a function literal, with the
// caller's options and some of its own, as testkube's NewNATSConnection
// does: its calls are the connects, as if it connected itself.
func NewBusConnection(url string, opts ...nats.Option) (*nats.Conn, error) { // want NewBusConnection:"connects with parameter 1's options, else buffer default"
	opts = append(opts, nats.MaxReconnects(-1), nats.Name("bus"))
	return attempt(3, func() (*nats.Conn, error) {
		return nats.Connect(url, opts...) // want `delegated nats.Connect to the calls of exported NewBusConnection: its options come from parameter opts`
	})
}

// NewPlainConnection passes the caller's options on untouched.
func NewPlainConnection(url string, opts ...nats.Option) (*nats.Conn, error) { // want NewPlainConnection:"connects with parameter 1's options, else buffer default"
	return attempt(3, func() (*nats.Conn, error) {
		return nats.Connect(url, opts...) // want `delegated nats.Connect to the calls of exported NewPlainConnection: its options come from parameter opts`
	})
}

// Near miss: its own ReconnectBufSize(-1), after the caller's options,
// decides: no connect left to judge at its calls.
func NewQuietConnection(url string, opts ...nats.Option) (*nats.Conn, error) {
	opts = append(opts, nats.ReconnectBufSize(-1))
	return attempt(3, func() (*nats.Conn, error) {
		return nats.Connect(url, opts...)
	})
}

// Near miss: the literal itself appends to the captured options, once
// per attempt: not followed.
func NewGrowingConnection(url string, opts ...nats.Option) (*nats.Conn, error) {
	return attempt(3, func() (*nats.Conn, error) {
		opts = append(opts, nats.MaxReconnects(-1))
		return nats.Connect(url, opts...) // want `unjudged nats.Connect: opts assigned in a function literal`
	})
}

// dialBus is newBus's connect, retried, with the caller's options.
func dialBus(url string, opts ...nats.Option) (*nats.Conn, error) {
	opts = append(opts, nats.Name("bus"))
	return attempt(3, func() (*nats.Conn, error) { return nats.Connect(url, opts...) })
}

func newBus(url string) error {
	if _, err := dialBus(url); err != nil { // want `call of dialBus connects without nats.ReconnectBufSize\(-1\)`
		return err
	}
	_, err := dialBus(url, nats.ReconnectBufSize(-1))
	return err
}
