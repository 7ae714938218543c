package connaudit // want package:"uses nats.go"

// Connects whose options other code changes, as the modules that showed
// them are written: options kept in a field and changed in place, a
// config passed to two constructors in turn, exported option fields the
// callers set. What can be judged is; each audit entry says which field
// or store to look at.

import "github.com/nats-io/nats.go"

// Client keeps its options and changes them in place.
type Client struct {
	opts nats.Options
	conn *nats.Conn
}

func NewClient(url string) *Client {
	c := &Client{opts: nats.GetDefaultOptions()}
	c.opts.Url = url
	return c
}

func (c *Client) SetBuffer(n int) { c.opts.ReconnectBufSize = n }

func (c *Client) Dial() error {
	nc, err := c.opts.Connect() // want `unjudged \(nats.Options\).Connect: field opts's ReconnectBufSize is changed in place at connaudit.go:23 in \(\*Client\).SetBuffer: look there`
	c.conn = nc
	return err
}

// Config is passed to two constructors in turn.
type Config struct {
	URL         string
	NatsOptions []nats.Option
}

func NewPublisher(cfg Config) (*nats.Conn, error) { // want NewPublisher:`connects with parameter 0's field NatsOptions, else buffer default`
	return nats.Connect(cfg.URL, cfg.NatsOptions...) // want `delegated nats.Connect to the calls of exported NewPublisher: its options come from field NatsOptions of parameter cfg`
}

func NewSubscriber(cfg Config) (*nats.Conn, error) { // want NewSubscriber:`connects with parameter 0's field NatsOptions, else buffer default`
	return nats.Connect(cfg.URL, cfg.NatsOptions...) // want `delegated nats.Connect to the calls of exported NewSubscriber: its options come from field NatsOptions of parameter cfg`
}

func wire() {
	cfg := Config{URL: "nats://x", NatsOptions: []nats.Option{nats.Name("svc")}}
	_, _ = NewPublisher(cfg)  // want `call of NewPublisher connects without nats.ReconnectBufSize\(-1\)`
	_, _ = NewSubscriber(cfg) // want `call of NewSubscriber connects without nats.ReconnectBufSize\(-1\)`
}

// Transport has an exported Options field its users set.
type Transport struct {
	Options *nats.Options
	URL     string
}

func (t *Transport) Open() (*nats.Conn, error) {
	return t.Options.Connect() // want `unjudged \(nats.Options\).Connect: exported field Transport.Options, which other packages may set: look at where they make Transport values`
}

type Bus struct {
	Opts []nats.Option
}

func (b *Bus) Open(url string) (*nats.Conn, error) {
	return nats.Connect(url, b.Opts...) // want `unjudged nats.Connect: exported field Bus.Opts, which other packages may set: look at where they make Bus values`
}

// Server changes only its URL in place: judged by the stores to the field
// (nats.GetDefaultOptions(): the buffer's default).
type Server struct {
	opts nats.Options
}

func newServer(url string) *Server {
	s := &Server{opts: nats.GetDefaultOptions()}
	s.opts.Url = url
	s.opts.Name = "server"
	return s
}

func (s *Server) dial() (*nats.Conn, error) {
	return s.opts.Connect() // want `\(nats.Options\).Connect leaves ReconnectBufSize at its default`
}

// NatsConfig is given by address to one constructor, then another.
type NatsConfig struct {
	ServerURI string
	Options   []nats.Option
}

func NewDefaultProducer(c *NatsConfig) (*nats.Conn, error) { // want NewDefaultProducer:`connects with parameter 0's field Options, else buffer default`
	return nats.Connect(c.ServerURI, c.Options...) // want `delegated nats.Connect to the calls of exported NewDefaultProducer: its options come from field Options of parameter c`
}

func NewJetProducer(c *NatsConfig) (*nats.Conn, error) { // want NewJetProducer:`connects with parameter 0's field Options, else buffer default`
	return nats.Connect(c.ServerURI, c.Options...) // want `delegated nats.Connect to the calls of exported NewJetProducer: its options come from field Options of parameter c`
}

func produce() {
	c := NatsConfig{ServerURI: "127.0.0.1:4222"}
	_, _ = NewDefaultProducer(&c) // want `call of NewDefaultProducer connects without nats.ReconnectBufSize\(-1\)`
	_, _ = NewJetProducer(&c)     // want `call of NewJetProducer connects without nats.ReconnectBufSize\(-1\)`
}

// produceSafe sets the buffer off in the literal: nothing to report.
func produceSafe() {
	c := NatsConfig{ServerURI: "127.0.0.1:4222", Options: []nats.Option{nats.ReconnectBufSize(-1)}}
	_, _ = NewDefaultProducer(&c)
	_, _ = NewJetProducer(&c)
}

// produceChanged appends to the options between the two calls, a store
// the check does not follow: both calls listed as unjudged.
func produceChanged(extra nats.Option) {
	c := NatsConfig{ServerURI: "127.0.0.1:4222"}
	_, _ = NewDefaultProducer(&c) // want `unjudged call of NewDefaultProducer: field Options of c set in a way not followed`
	c.Options = append(c.Options, extra)
	_, _ = NewJetProducer(&c) // want `unjudged call of NewJetProducer: field Options of c set in a way not followed`
}

// NatsOptions mirrors nats.Options in a configuration file; ToOptions
// converts it, the buffer size included: not a constant, listed with the
// place.
type NatsOptions struct {
	URL              string
	AllowReconnect   bool
	ReconnectBufSize int
}

func (o NatsOptions) ToOptions() nats.Options {
	options := nats.Options{
		Url:              o.URL,
		AllowReconnect:   o.AllowReconnect,
		ReconnectBufSize: o.ReconnectBufSize,
	}
	return options
}

func start(cfg NatsOptions) (*nats.Conn, error) {
	return cfg.ToOptions().Connect() // want `unjudged \(nats.Options\).Connect: options value options: its AllowReconnect is o.AllowReconnect, not a constant, at connaudit.go:134 in \(NatsOptions\).ToOptions`
}
