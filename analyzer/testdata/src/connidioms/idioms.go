// Package connidioms has the connection-option idioms of public code that // want package:"uses nats.go"
// the reconnectbuf check used to leave unjudged: a slice made and then
// appended to, nats.go's examples' opts = setupConnOptions(opts), and
// options a constructor keeps in a field.
package connidioms

import (
	"crypto/tls"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
)

// make then append, as a CLI builds its options from flags.
func dialMake(url, name string) (*nats.Conn, error) {
	opts := make([]nats.Option, 0, 4)
	opts = append(opts, nats.Name(name))
	opts = append(opts, nats.ReconnectWait(2*time.Second), nats.MaxReconnects(-1))
	return nats.Connect(url, opts...) // want `nats.Connect without nats.ReconnectBufSize\(-1\) keeps the reconnect buffer`
}

func dialMakeSafe(url, name string) (*nats.Conn, error) {
	opts := make([]nats.Option, 0, 4)
	opts = append(opts, nats.Name(name), nats.ReconnectBufSize(-1))
	return nats.Connect(url, opts...)
}

// A flag on some paths only stays unjudged.
func dialMakeTLS(url string, tlsConf *tls.Config) (*nats.Conn, error) {
	opts := make([]nats.Option, 0, 2)
	if tlsConf != nil {
		opts = append(opts, nats.ReconnectBufSize(-1))
	}
	return nats.Connect(url, opts...) // want `unjudged nats.Connect: opts set on some paths only`
}

// nats.go's examples: opts = setupConnOptions(opts).
func setupConnOptions(opts []nats.Option) []nats.Option {
	totalWait := 10 * time.Minute
	reconnectDelay := time.Second
	opts = append(opts, nats.ReconnectWait(reconnectDelay))
	opts = append(opts, nats.MaxReconnects(int(totalWait/reconnectDelay)))
	return opts
}

func exampleMain(url string) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name("NATS Sample Subscriber")}
	opts = setupConnOptions(opts)
	return nats.Connect(url, opts...) // want `nats.Connect without nats.ReconnectBufSize\(-1\) keeps the reconnect buffer`
}

// The same helper shape that disables the buffer: no finding.
func safeConnOptions(opts []nats.Option) []nats.Option {
	return append(opts, nats.MaxReconnects(-1), nats.ReconnectBufSize(-1))
}

func safeMain(url string) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name("worker")}
	opts = safeConnOptions(opts)
	return nats.Connect(url, opts...)
}

// The caller's own setting after the helper's wins.
func overrideMain(url string) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name("worker")}
	opts = safeConnOptions(opts)
	opts = append(opts, nats.ReconnectBufSize(8<<20))
	return nats.Connect(url, opts...) // want `nats.Connect with ReconnectBufSize\(8388608\) still buffers`
}

// Options kept in a struct field from a constructor parameter.
type Client struct {
	url  string
	opts []nats.Option
	nc   *nats.Conn
}

func NewClient(url string, opts ...nats.Option) *Client { // want NewClient:"connects with parameter 1's options, else buffer default"
	return &Client{url: url, opts: opts}
}

func (c *Client) Connect() error {
	nc, err := nats.Connect(c.url, c.opts...) // want `delegated nats.Connect to the calls of exported NewClient: its options come from parameter opts, kept in field opts`
	if err != nil {
		return err
	}
	c.nc = nc
	return nil
}

func localUse() {
	c := NewClient("nats://x", nats.Name("a")) // want `call of NewClient connects without nats.ReconnectBufSize\(-1\)`
	_ = c.Connect()
	safe := NewClient("nats://x", nats.Name("a"), nats.ReconnectBufSize(-1))
	_ = safe.Connect()
}

// A field also changed after the constructor stays unjudged.
type pool struct {
	opts []nats.Option
}

func newPool(opts []nats.Option) *pool { return &pool{opts: opts} }

func (p *pool) withTimeout(d time.Duration) { p.opts = append(p.opts, nats.Timeout(d)) }

func (p *pool) dial(url string) (*nats.Conn, error) {
	return nats.Connect(url, p.opts...) // want `unjudged nats.Connect: field opts stored from a parameter`
}

func usePool() {
	p := newPool(nil)
	p.withTimeout(time.Second)
	_, _ = p.dial("nats://x")
}

// A helper returning a nats.go option built with an error, as jsm.go's
// natscontext returns nats.NkeyOptionFromSeed(path): judged through the
// call it returns.
func nkeyOption(seed string) (nats.Option, error) {
	if seed == "" {
		return nil, errNoSeed
	}
	return nats.NkeyOptionFromSeed(seed)
}

var errNoSeed = errors.New("no seed")

func connectWithSeed(url, seed string) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name("seeded")}
	opt, err := nkeyOption(seed)
	if err != nil {
		return nil, err
	}
	opts = append(opts, opt)
	return nats.Connect(url, opts...) // want `nats.Connect without nats.ReconnectBufSize\(-1\)`
}

// Near miss: the option returned through two helpers disables the buffer.
func noBuffer() (nats.Option, error) { return nats.ReconnectBufSize(-1), nil }

func noBufferAgain() (nats.Option, error) { return noBuffer() }

func connectNoBuffer(url string) (*nats.Conn, error) {
	opt, err := noBufferAgain()
	if err != nil {
		return nil, err
	}
	return nats.Connect(url, opt)
}

// Still unjudged: the other call's results are not options built here.
func optionFromValue(f func() (nats.Option, error)) (nats.Option, error) { return f() }

func connectFromValue(url string) (*nats.Conn, error) {
	opt, err := optionFromValue(func() (nats.Option, error) { return nats.Name("x"), nil })
	if err != nil {
		return nil, err
	}
	return nats.Connect(url, opt) // want `unjudged nats.Connect: options from a function value`
}
