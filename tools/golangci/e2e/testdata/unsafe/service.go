// Package unsafe is a golangci-lint fixture: a small NATS service written
// the way natssend reports, against the real nats.go API.
package unsafe

import (
	"errors"
	"time"

	"github.com/nats-io/nats.go"

	"example.com/unsafe/wrap"
)

// Connect keeps nats.go's 8 MiB outgoing reconnect buffer.
func Connect(url string) (*nats.Conn, error) {
	return nats.Connect(url, nats.MaxReconnects(-1)) // finding: reconnectbuf
}

// ConnectSafe disables the reconnect buffer: not reported.
func ConnectSafe(url string) (*nats.Conn, error) {
	return nats.Connect(url, nats.ReconnectBufSize(-1))
}

// Announce publishes without sizing.
func Announce(nc *nats.Conn, body []byte) error {
	return nc.Publish("orders.created", body) // finding: rawsend
}

// Lookup retries a Core NATS request until it succeeds.
func Lookup(nc *nats.Conn, id []byte) (*nats.Msg, error) {
	var lastErr error
	for range 3 {
		reply, err := nc.Request("orders.get", id, time.Second) // finding: rawsend retry
		if err == nil {
			return reply, nil
		}
		lastErr = err
	}
	return nil, errors.Join(errors.New("lookup failed"), lastErr)
}

// Serve answers requests with a raw reply.
func Serve(nc *nats.Conn) (*nats.Subscription, error) {
	return nc.Subscribe("orders.get", func(m *nats.Msg) {
		_ = m.Respond([]byte("{}")) // finding: rawsend
	})
}

// Ack answers with a reviewed raw reply: not reported.
func Ack(m *nats.Msg) error {
	//natssend:reviewed a fixed 2-byte ack always fits
	return m.Respond([]byte("ok")) // audit: reviewed
}

// Forward goes through the wrap package, which the configuration lists
// as a shim package: not reported here or there.
func Forward(nc *nats.Conn, body []byte) error {
	return wrap.Publish(nc, "orders.forwarded", body)
}

// Dial connects with its caller's options: judged at its calls, listed as
// delegated with -audit.
func Dial(url string, opts ...nats.Option) (*nats.Conn, error) {
	return nats.Connect(url, opts...) // audit: delegated
}

// DialAll connects with options from a function value: listed as
// unjudged with -audit.
func DialAll(url string, opts func() []nats.Option) (*nats.Conn, error) {
	return nats.Connect(url, opts()...) // audit: unjudged
}
