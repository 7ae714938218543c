package connidioms

import (
	"crypto/tls"
	"sync"

	"github.com/nats-io/nats.go"
)

// A connection pool as nack's: the constructor keeps its caller's options
// in a field, and each connect, in a function literal run once per key,
// adds credentials and a name that leave the reconnect buffer alone. The
// calls of the constructor are the connects.

type natsContext struct {
	Name, Token, Username, Password, Nkey, URL string
	TLS                                        *tls.Config
}

type natsConnPool struct {
	mu       sync.Mutex
	cache    map[string]*nats.Conn
	natsOpts []nats.Option
}

func newNatsConnPool(natsOpts []nats.Option) *natsConnPool {
	return &natsConnPool{cache: map[string]*nats.Conn{}, natsOpts: natsOpts}
}

func (cp *natsConnPool) do(key string, f func() (*nats.Conn, error)) (*nats.Conn, error) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if nc, ok := cp.cache[key]; ok {
		return nc, nil
	}
	nc, err := f()
	if err == nil {
		cp.cache[key] = nc
	}
	return nc, err
}

func (cp *natsConnPool) get(key string, cfg *natsContext) (*nats.Conn, error) {
	return cp.do(key, func() (*nats.Conn, error) {
		opts := cp.natsOpts
		opts = append(opts, func(options *nats.Options) error {
			if cfg.Name != "" {
				options.Name = cfg.Name
			}
			if cfg.Token != "" {
				options.Token = cfg.Token
			}
			return nil
		})
		if cfg.Nkey != "" {
			opt, err := nats.NkeyOptionFromSeed(cfg.Nkey)
			if err != nil {
				return nil, err
			}
			opts = append(opts, opt)
		}
		if cfg.Token != "" {
			opts = append(opts, nats.Token(cfg.Token))
		}
		return nats.Connect(cfg.URL, opts...)
	})
}

func runController(url string, credsToken string) error {
	opts := make([]nats.Option, 0)
	opts = append(opts, nats.MaxReconnects(-1))
	if credsToken != "" {
		opts = append(opts, nats.Token(credsToken))
	}
	pool := newNatsConnPool(opts) // want `call of newNatsConnPool connects without nats.ReconnectBufSize\(-1\)`
	if _, err := pool.get("default", &natsContext{URL: url}); err != nil {
		return err
	}
	safe := newNatsConnPool(append(opts, nats.ReconnectBufSize(-1)))
	_, err := safe.get("default", &natsContext{URL: url})
	return err
}

// realClient.Connect passes its caller's options to the pool; other
// packages call it through an interface, which is not followed.
type realClient struct{ pool *natsConnPool }

func (c *realClient) Connect(url string, opts ...nats.Option) error { // want Connect:"connects with parameter 1's options, else buffer default"
	c.pool = newNatsConnPool(opts) // want `unjudged call of newNatsConnPool: its options come from the caller of Connect, a method of an unexported type, called through interfaces`
	_, err := c.pool.get("default", &natsContext{URL: url})
	return err
}

// Near misses: an option of the pool's own that sets the buffer, before
// the caller's (which may override it) or after them, is not delegated
// to the constructor's calls: not judged.
type sizedPool struct{ natsOpts []nats.Option }

func newSizedPool(natsOpts []nats.Option) *sizedPool { return &sizedPool{natsOpts: natsOpts} }

func (p *sizedPool) dial(url string) (*nats.Conn, error) {
	return nats.Connect(url, append([]nats.Option{nats.ReconnectBufSize(-1)}, p.natsOpts...)...) // want `unjudged nats.Connect: field natsOpts stored from a parameter at pool.go:99 in newSizedPool: look at its calls`
}

func (p *sizedPool) dialLast(url string) (*nats.Conn, error) {
	opts := p.natsOpts
	opts = append(opts, func(o *nats.Options) error {
		o.ReconnectBufSize = 1 << 20
		return nil
	})
	return nats.Connect(url, opts...) // want `unjudged nats.Connect: field natsOpts stored from a parameter`
}

func useSized() {
	p := newSizedPool([]nats.Option{nats.Name("x")})
	_, _ = p.dial("nats://x")
	_, _ = p.dialLast("nats://x")
}
