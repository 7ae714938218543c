// Package delegation has connects whose options come from the callers of // want package:"uses nats.go"
// an exported function, as libraries write them (jsm.go's monitor checks
// and natscontext, nats-surveyor's test helper): each is judged at the
// calls of that function through a fact, and -audit lists it as
// delegated, naming the function.
package delegation

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// Result collects a check's outcome.
type Result struct{ problems []string }

// CriticalIfErrf records err and reports whether there was one.
func (r *Result) CriticalIfErrf(err error, format string, a ...any) bool {
	if err != nil {
		r.problems = append(r.problems, format)
	}
	return err != nil
}

// CheckJetstreamMetaOptions configures CheckJetstreamMeta.
type CheckJetstreamMetaOptions struct {
	Resolver func(*nats.Conn) error `json:"-"`
}

// CheckConnection is a monitor check: it connects with the caller's
// options, as a slice.
func CheckConnection(server string, nopts []nats.Option, timeout time.Duration, check *Result) error { // want CheckConnection:"connects with parameter 1's options, else buffer default"
	nc, err := nats.Connect(server, nopts...) // want `delegated nats.Connect to the calls of exported CheckConnection: its options come from parameter nopts`
	if check.CriticalIfErrf(err, "connection failed: %v", err) {
		return nil
	}
	defer nc.Close()
	_, err = nc.RTT()
	return err
}

// CheckJetstreamMeta connects only when no resolver is given: still the
// caller's options.
func CheckJetstreamMeta(servers string, nopts []nats.Option, check *Result, opts CheckJetstreamMetaOptions) error { // want CheckJetstreamMeta:"connects with parameter 1's options, else buffer default"
	var nc *nats.Conn
	var err error
	if opts.Resolver == nil {
		nc, err = nats.Connect(servers, nopts...) // want `delegated nats.Connect to the calls of exported CheckJetstreamMeta: its options come from parameter nopts`
		if check.CriticalIfErrf(err, "connection failed: %v", err) {
			return nil
		}
		defer nc.Close()
	}
	if opts.Resolver != nil {
		return opts.Resolver(nc)
	}
	return nil
}

// Context is a stored connection context.
type Context struct{ url, creds string }

// NATSOptions returns the context's options followed by the caller's.
func (c *Context) NATSOptions(opts ...nats.Option) ([]nats.Option, error) { // want NATSOptions:"options parameter 0's options, else buffer default"
	if c == nil {
		return nil, errors.New("no context")
	}
	nopts := []nats.Option{nats.Name("ctx")}
	nopts = append(nopts, opts...)
	return nopts, nil
}

// Connect connects to the configured server, as natscontext does.
func (c *Context) Connect(opts ...nats.Option) (*nats.Conn, error) { // want Connect:"connects with parameter 0's options, else buffer default"
	nopts, err := c.NATSOptions(opts...)
	if err != nil {
		return nil, err
	}
	return nats.Connect(c.url, nopts...) // want `delegated nats.Connect to the calls of exported Connect: its options come from parameter opts`
}

// ConnectAndVerify is a test helper in a non-test file: the tests'
// calls are the connects.
func ConnectAndVerify(t *testing.T, url string, options ...nats.Option) *nats.Conn { // want ConnectAndVerify:"connects with parameter 2's options, else buffer default"
	c, err := nats.Connect(url, options...) // want `delegated nats.Connect to the calls of exported ConnectAndVerify: its options come from parameter options`
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return c
}

// Near miss: two connects with the caller's options, the second after a
// buffer size of its own, which the caller's options may override. Only the first stands for Redial's calls; the
// second is not followed and stays unjudged.
func Redial(url string, opts ...nats.Option) (*nats.Conn, error) { // want Redial:"connects with parameter 1's options, else buffer default"
	nc, err := nats.Connect(url, opts...) // want `delegated nats.Connect to the calls of exported Redial: its options come from parameter opts`
	if err == nil {
		return nc, nil
	}
	return nats.Connect(url, append([]nats.Option{nats.ReconnectBufSize(64 << 10)}, opts...)...) // want `unjudged nats.Connect: its options come from the caller of exported Redial, whose calls are judged by another of its connects`
}

// Near miss: an unexported function's connect is judged at its calls in
// this package, which are all there is: not listed.
func dial(url string, opts ...nats.Option) (*nats.Conn, error) { return nats.Connect(url, opts...) }

// Dial adds the buffer setting to its caller's options: judged here.
func Dial(url string) (*nats.Conn, error) { return dial(url, nats.ReconnectBufSize(-1)) }
