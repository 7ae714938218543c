package connectlib // want package:"uses nats.go"

// connectlib builds connections for other packages: its facts say what
// the options it returns, or the connects it makes with its callers'
// options, do to the reconnect buffer.

import "github.com/nats-io/nats.go"

// Options are a service's usual options; they leave the buffer at its
// default.
func Options(name string) []nats.Option { // want Options:"options buffer default"
	return []nats.Option{nats.Name(name), nats.MaxReconnects(-1)}
}

// SafeOptions disable the buffer.
func SafeOptions(name string) []nats.Option { // want SafeOptions:"options buffer disabled"
	return append(Options(name), nats.ReconnectBufSize(-1))
}

// Dial connects with the caller's options: judged where it is called.
func Dial(url string, opts ...nats.Option) (*nats.Conn, error) { // want Dial:"connects with parameter 1's options, else buffer default"
	return nats.Connect(url, append([]nats.Option{nats.Name("lib")}, opts...)...)
}
