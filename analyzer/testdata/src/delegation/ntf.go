package delegation

import (
	"crypto/tls"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// A test-cluster client as orbit.go's ntf-client: the helpers connect with
// the options that the WithConnectOptions values among their CreateOptions
// add to a field, applied in turn through an interface method. The field
// is unexported and only WithConnectOptions' literal stores it, so each
// call of an exported helper is judged by the option values it passes.

// CreateOption customizes a created server.
type CreateOption interface{ applyCreate(*createOptions) }

type createOptions struct {
	description    string
	snippets       map[string]string
	connectOptions []nats.Option
	tls            *tls.Config
}

type snippetOpt struct{ key, body string }

func (s snippetOpt) applyCreate(o *createOptions) {
	if o.snippets == nil {
		o.snippets = map[string]string{}
	}
	o.snippets[s.key] = s.body
}

type createOpt func(*createOptions)

func (f createOpt) applyCreate(o *createOptions) { f(o) }

// WithDescription labels the instance.
func WithDescription(d string) createOpt {
	return func(o *createOptions) { o.description = d }
}

// WithAccounts replaces the accounts block.
func WithAccounts(body string) snippetOpt { return snippetOpt{key: "accounts", body: body} }

// WithGeneratedTLS asks for TLS, tuned by opts.
func WithGeneratedTLS(opts ...func(*tls.Config)) CreateOption {
	return createOpt(func(o *createOptions) {
		t := &tls.Config{}
		for _, opt := range opts {
			opt(t)
		}
		o.tls = t
	})
}

// WithConnectOptions passes options to the helpers' connect.
func WithConnectOptions(opts ...nats.Option) createOpt {
	return func(o *createOptions) { o.connectOptions = append(o.connectOptions, opts...) }
}

// WithAll applies other options: its values may add connect options.
func WithAll(opts ...CreateOption) CreateOption {
	return createOpt(func(o *createOptions) {
		for _, opt := range opts {
			opt.applyCreate(o)
		}
	})
}

func resolveCreateOptions(t *testing.T, opts []CreateOption) createOptions {
	co := createOptions{description: t.Name()}
	for _, o := range opts {
		o.applyCreate(&co)
	}
	return co
}

func helperConnectOptions(t *testing.T, co createOptions) []nats.Option {
	t.Helper()
	opts := []nats.Option{nats.MaxReconnects(-1)}
	if co.tls != nil {
		opts = append(opts, nats.Name("tls"))
	}
	opts = append(opts, co.connectOptions...)
	return opts
}

// TestClient creates servers for tests.
type TestClient struct{ url string }

// WithServer creates a server and connects to it.
func (c *TestClient) WithServer(t *testing.T, h func(*testing.T, *nats.Conn), opts ...CreateOption) { // want WithServer:"connects with parameter 2's option values \\(field connectOptions\\), else buffer default"
	t.Helper()
	c.withServer(t, false, h, opts...) // want `delegated call of withServer to the calls of exported WithServer: its options come from the option values in parameter opts`
}

func (c *TestClient) withServer(t *testing.T, js bool, h func(*testing.T, *nats.Conn), opts ...CreateOption) {
	t.Helper()
	co := resolveCreateOptions(t, opts)
	nc, err := nats.Connect(c.url, helperConnectOptions(t, co)...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	h(t, nc)
}

// Dial connects with the field of the struct the options were applied to.
func (c *TestClient) Dial(t *testing.T, opts ...CreateOption) (*nats.Conn, error) { // want Dial:"connects with parameter 1's option values \\(field connectOptions\\), else buffer default"
	co := resolveCreateOptions(t, opts)
	return nats.Connect(c.url, co.connectOptions...) // want `delegated nats.Connect to the calls of exported Dial: its options come from the option values in parameter opts`
}

// Near miss: options applied on some condition only are not followed.
func (c *TestClient) WithSomeServer(t *testing.T, h func(*testing.T, *nats.Conn), opts ...CreateOption) {
	co := createOptions{}
	for _, o := range opts {
		if o != nil {
			o.applyCreate(&co)
		}
	}
	nc, err := nats.Connect(c.url, helperConnectOptions(t, co)...) // want `unjudged nats.Connect: the address of co is taken`
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	h(t, nc)
}

// The package's tests, as ntf-client's.
func clientTests(t *testing.T, c *TestClient, h func(*testing.T, *nats.Conn)) {
	c.WithServer(t, h)                                                  // want `call of WithServer connects without nats.ReconnectBufSize\(-1\)`
	c.WithServer(t, h, WithGeneratedTLS(), WithAccounts("accounts {}")) // want `call of WithServer connects without nats.ReconnectBufSize\(-1\)`
	c.WithServer(t, h, WithConnectOptions(nats.Timeout(time.Second)))   // want `call of WithServer connects without nats.ReconnectBufSize\(-1\)`
	c.WithServer(t, h, WithDescription("x"), WithConnectOptions(nats.ReconnectBufSize(-1)))
	c.WithServer(t, h, WithConnectOptions(nats.ReconnectBufSize(-1)), WithConnectOptions(nats.ReconnectBufSize(4096))) // want `call of WithServer connects with ReconnectBufSize\(4096\) still buffers`
	// Near misses: a value that applies others, or one from a variable.
	c.WithServer(t, h, WithAll(WithConnectOptions(nats.ReconnectBufSize(-1)))) // want `unjudged call of WithServer: the option value of WithAll, not followed`
	opt := WithConnectOptions(nats.ReconnectBufSize(-1))
	c.WithServer(t, h, opt) // want `unjudged call of WithServer: an option value not followed`
}

// Near miss: an option type whose method may skip the value; what its
// values add is not known, and the connect is not delegated.
type dialOptions struct{ natsOpts []nats.Option }

// DialOption customizes Dial2.
type DialOption interface{ applyDial(*dialOptions) }

type dialOpt func(*dialOptions)

func (f dialOpt) applyDial(o *dialOptions) {
	if f != nil {
		f(o)
	}
}

// WithNatsOptions adds connect options.
func WithNatsOptions(opts ...nats.Option) dialOpt {
	return func(o *dialOptions) { o.natsOpts = append(o.natsOpts, opts...) }
}

func resolveDial(opts []DialOption) dialOptions {
	d := dialOptions{}
	for _, o := range opts {
		o.applyDial(&d)
	}
	return d
}

// Dial2 connects with the options its DialOptions add.
func Dial2(url string, opts ...DialOption) (*nats.Conn, error) {
	d := resolveDial(opts)
	return nats.Connect(url, d.natsOpts...) // want `unjudged nats.Connect: field natsOpts stored from a parameter`
}
