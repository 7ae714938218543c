package connect

import (
	"connectlib"
	"time"

	"github.com/nats-io/nats.go"
)

// Options built elsewhere, as services and connectors build them.

type config struct {
	name  string
	token string
	tls   bool
}

func (c *config) connectOptions() []nats.Option {
	return []nats.Option{nats.Name(c.name), nats.ReconnectWait(time.Second)}
}

func (c *config) safeOptions() []nats.Option {
	return append(c.connectOptions(), nats.ReconnectBufSize(-1))
}

func authOpts(token string) []nats.Option { return []nats.Option{nats.Token(token)} }

func optionsFrom(c config) []nats.Option {
	opts := []nats.Option{nats.Name(c.name)}
	if c.tls {
		opts = append(opts, nats.ReconnectBufSize(-1))
	}
	return opts
}

func builders(url string, c *config) {
	_, _ = nats.Connect(url, c.connectOptions()...) // want `nats.Connect without nats.ReconnectBufSize\(-1\) keeps the reconnect buffer`
	_, _ = nats.Connect(url, c.safeOptions()...)

	base := []nats.Option{nats.Name("svc")}
	all := append(base, authOpts(c.token)...)
	_, _ = nats.Connect(url, all...) // want `nats.Connect without nats.ReconnectBufSize\(-1\) keeps the reconnect buffer`
	_, _ = nats.Connect(url, append(authOpts(c.token), nats.ReconnectBufSize(-1))...)

	// The buffer is disabled on some paths only: not judged.
	_, _ = nats.Connect(url, optionsFrom(*c)...)

	// Another package's options, through its facts.
	_, _ = nats.Connect(url, connectlib.Options("svc")...) // want `nats.Connect without nats.ReconnectBufSize\(-1\) keeps the reconnect buffer`
	_, _ = nats.Connect(url, connectlib.SafeOptions("svc")...)
}

// A struct field filled in a constructor and copied later.
type server struct {
	url      string
	natsOpts nats.Options
	extra    []nats.Option
}

func newServer(url string) *server {
	s := &server{url: url, extra: []nats.Option{nats.ReconnectBufSize(-1)}}
	s.natsOpts = nats.GetDefaultOptions()
	return s
}

func (s *server) start() {
	opts := s.natsOpts
	opts.Url = s.url
	_, _ = opts.Connect() // want `\(nats.Options\).Connect leaves ReconnectBufSize at its default`

	safe := s.natsOpts
	safe.ReconnectBufSize = -1
	_, _ = safe.Connect()

	_, _ = nats.Connect(s.url, s.extra...)
}

// Options passed by the caller: judged at the call.
func dial(url string, opts ...nats.Option) (*nats.Conn, error) {
	opts = append(opts, nats.Name("svc"))
	return nats.Connect(url, opts...)
}

func dialSafe(url string, opts ...nats.Option) (*nats.Conn, error) {
	return nats.Connect(url, append(opts, nats.ReconnectBufSize(-1))...)
}

func callers(url string, c *config) {
	_, _ = dial(url)                                // want `call of dial connects without nats.ReconnectBufSize\(-1\): a buffered request goes out after its timeout; use shim\.Connect`
	_, _ = dial(url, nats.ReconnectBufSize(4096))   // want `call of dial connects with ReconnectBufSize\(4096\) still buffers \(-1 disables it\)`
	_, _ = dial(url, c.connectOptions()...)         // want `call of dial`
	_, _ = dial(url, nats.ReconnectBufSize(-1))     // disabled by the caller
	_, _ = dialSafe(url, nats.ReconnectBufSize(64)) // disabled after the caller's options
	_, _ = connectlib.Dial(url)                     // want `call of Dial connects without nats.ReconnectBufSize\(-1\)`
	_, _ = connectlib.Dial(url, c.safeOptions()...)
}

// A connection pool keeps its connect function in a field, filled in the
// constructor with a literal that passes the caller's options on.
type connectFunc func(url string, options ...nats.Option) (*nats.Conn, error)

type pool struct {
	connect connectFunc
}

func newPool() *pool {
	return &pool{connect: func(url string, options ...nats.Option) (*nats.Conn, error) {
		return nats.Connect(url, options...)
	}}
}

func (p *pool) acquire(addr string) {
	_, _ = p.connect(addr, nats.Timeout(time.Second)) // want `call of p.connect connects without nats.ReconnectBufSize\(-1\)`
	_, _ = p.connect(addr, nats.ReconnectBufSize(-1))
}

// A test's stub stored in the same field does not connect: the call is
// judged by the value that does.
func stubbed(p *pool) {
	p.connect = func(string, ...nats.Option) (*nats.Conn, error) { return nil, nil }
}
