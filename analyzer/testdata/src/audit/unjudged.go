package audit

import "github.com/nats-io/nats.go"

// With -audit, the connects whose options the analyzer cannot judge are
// listed, with why.

// Dial has no caller here: its callers elsewhere are judged through its
// fact.
func Dial(url string, opts ...nats.Option) (*nats.Conn, error) { // want Dial:"connects with parameter 1's options, else buffer default"
	return nats.Connect(url, opts...) // want `delegated nats.Connect to the calls of exported Dial: its options come from parameter opts`
}

func sized(url string, n int, plugins []func() nats.Option) {
	_, _ = nats.Connect(url, nats.ReconnectBufSize(n)) // want `unjudged nats.Connect: a non-constant ReconnectBufSize`
	opts := []nats.Option{nats.Name("svc")}
	for _, p := range plugins {
		opts = append(opts, p())
	}
	_, _ = nats.Connect(url, opts...) // want `unjudged nats.Connect: options from a function value`

	// dial's callers in the package are judged: not listed.
	_, _ = dial(url, nats.ReconnectBufSize(-1))
}

func dial(url string, opts ...nats.Option) (*nats.Conn, error) { return nats.Connect(url, opts...) }

var connectors []func(string, ...nats.Option) (*nats.Conn, error)

func register() {
	connectors = append(connectors, func(url string, opts ...nats.Option) (*nats.Conn, error) {
		return nats.Connect(url, opts...) // want `unjudged nats.Connect: its options come from the caller of the function literal at line 31 in register, whose calls are not followed`
	})
}
