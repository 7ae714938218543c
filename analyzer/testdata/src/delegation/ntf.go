package delegation

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// A test-cluster client as orbit.go's ntf-client: the connection options
// of its helpers are whatever WithConnectOptions values the caller passes
// among its CreateOptions, applied through an interface method in a loop
// and appended in a field. No fact says which CreateOption adds which
// options, so these connects stay unjudged.

// CreateOption customizes a created server.
type CreateOption interface{ applyCreate(*createOptions) }

type createOptions struct {
	description    string
	connectOptions []nats.Option
}

type createOpt func(*createOptions)

func (f createOpt) applyCreate(o *createOptions) { f(o) }

// WithDescription labels the instance.
func WithDescription(d string) CreateOption {
	return createOpt(func(o *createOptions) { o.description = d })
}

// WithConnectOptions passes options to the helpers' connect.
func WithConnectOptions(opts ...nats.Option) CreateOption {
	return createOpt(func(o *createOptions) { o.connectOptions = append(o.connectOptions, opts...) })
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
	opts = append(opts, co.connectOptions...)
	return opts
}

// TestClient creates servers for tests.
type TestClient struct{ url string }

// WithServer creates a server and connects to it.
func (c *TestClient) WithServer(t *testing.T, h func(*testing.T, *nats.Conn), opts ...CreateOption) {
	t.Helper()
	co := resolveCreateOptions(t, opts)
	nc, err := nats.Connect(c.url, helperConnectOptions(t, co)...) // want `unjudged nats.Connect: field connectOptions of co, built by resolveCreateOptions, not followed`
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	h(t, nc)
}

// Near miss: the same helper given a literal is judged.
func (c *TestClient) WithDefaultServer(t *testing.T, h func(*testing.T, *nats.Conn)) {
	co := createOptions{connectOptions: []nats.Option{nats.Timeout(time.Second)}}
	nc, err := nats.Connect(c.url, helperConnectOptions(t, co)...) // want `nats.Connect without nats.ReconnectBufSize\(-1\)`
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	h(t, nc)
}
