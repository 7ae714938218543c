// Package nats is a stub of github.com/nats-io/nats.go v1.55.0 for the
// analyzer's tests: the declarations the analyzer matches, with the real
// signatures and empty bodies.
package nats

import (
	"context"
	"errors"
	"time"
)

var (
	ErrTimeout          = errors.New("nats: timeout")
	ErrConnectionClosed = errors.New("nats: connection closed")
	ErrNoResponders     = errors.New("nats: no responders available for request")
	ErrMaxPayload       = errors.New("nats: maximum payload exceeded")

	ErrTooManyStalledMsgs = errors.New("nats: stalled with too many outstanding async published messages")
)

const MsgIdHdr = "Nats-Msg-Id"

type Header map[string][]string

func (h Header) Add(key, value string) { h[key] = append(h[key], value) }
func (h Header) Set(key, value string) { h[key] = []string{value} }
func (h Header) Get(key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

type Msg struct {
	Subject string
	Reply   string
	Header  Header
	Data    []byte
	Sub     *Subscription
}

func NewMsg(subject string) *Msg { return &Msg{Subject: subject, Header: make(Header)} }

func (m *Msg) Respond(data []byte) error { return nil }
func (m *Msg) RespondMsg(msg *Msg) error { return nil }
func (m *Msg) Ack() error                { return m.Respond(nil) }
func (m *Msg) AckSync() error {
	_, err := (&Conn{}).Request(m.Reply, nil, time.Second)
	return err
}

type Subscription struct{ Subject string }

func (s *Subscription) NextMsg(timeout time.Duration) (*Msg, error) { return nil, nil }
func (s *Subscription) NextMsgWithContext(ctx context.Context) (*Msg, error) {
	return nil, nil
}
func (s *Subscription) Unsubscribe() error { return nil }

type PullOpt interface{ configurePull() }

func (s *Subscription) Fetch(batch int, opts ...PullOpt) ([]*Msg, error) { return nil, nil }

func (s *Subscription) AutoUnsubscribe(max int) error { return nil }

func NewInbox() string { return "_INBOX.x" }

func (nc *Conn) NewInbox() string { return "_INBOX.x" }

type MsgHandler func(msg *Msg)

type Options struct {
	Url              string
	Name             string
	AllowReconnect   bool
	MaxReconnect     int
	ReconnectBufSize int
	Timeout          time.Duration
	Token            string
	User             string
}

type Option func(*Options) error

// DefaultOptions is nats.go's deprecated global default options.
var DefaultOptions = GetDefaultOptions()

func GetDefaultOptions() Options {
	return Options{AllowReconnect: true, MaxReconnect: 60, ReconnectBufSize: 8 * 1024 * 1024}
}

// Connect sends CONNECT and PING, as the real one does: nats.go's own
// functions must not count as senders.
func Connect(url string, options ...Option) (*Conn, error) {
	nc := &Conn{}
	return nc, nc.Publish("$connect", nil)
}
func (o Options) Connect() (*Conn, error) { return nil, nil }

func Name(name string) Option                            { return nil }
func NkeyOptionFromSeed(seedFile string) (Option, error) { return nil, nil }
func Timeout(t time.Duration) Option                     { return nil }
func NoReconnect() Option                                { return nil }
func MaxReconnects(max int) Option                       { return nil }
func ReconnectBufSize(size int) Option                   { return nil }
func ReconnectWait(t time.Duration) Option               { return nil }
func Token(token string) Option                          { return nil }
func UserCredentials(userOrChainedFile string) Option    { return nil }
func RetryOnFailedConnect(retry bool) Option             { return nil }

type Conn struct {
	Opts Options
}

func (nc *Conn) Publish(subj string, data []byte) error               { return nil }
func (nc *Conn) PublishMsg(m *Msg) error                              { return nil }
func (nc *Conn) PublishRequest(subj, reply string, data []byte) error { return nil }
func (nc *Conn) Request(subj string, data []byte, timeout time.Duration) (*Msg, error) {
	return nil, nil
}
func (nc *Conn) RequestMsg(msg *Msg, timeout time.Duration) (*Msg, error) { return nil, nil }
func (nc *Conn) RequestWithContext(ctx context.Context, subj string, data []byte) (*Msg, error) {
	return nil, nil
}
func (nc *Conn) RequestMsgWithContext(ctx context.Context, msg *Msg) (*Msg, error) {
	return nil, nil
}
func (nc *Conn) Subscribe(subj string, cb MsgHandler) (*Subscription, error) {
	return nil, nc.PublishRequest("$sub", subj, nil)
}
func (nc *Conn) QueueSubscribe(subj, queue string, cb MsgHandler) (*Subscription, error) {
	return nil, nil
}
func (nc *Conn) ChanSubscribe(subj string, ch chan *Msg) (*Subscription, error) { return nil, nil }
func (nc *Conn) ChanQueueSubscribe(subj, group string, ch chan *Msg) (*Subscription, error) {
	return nil, nil
}
func (nc *Conn) QueueSubscribeSyncWithChan(subj, queue string, ch chan *Msg) (*Subscription, error) {
	return nil, nil
}
func (nc *Conn) SubscribeSync(subj string) (*Subscription, error)  { return nil, nil }
func (nc *Conn) NewRespInbox() string                              { return "" }
func (nc *Conn) Flush() error                                      { return nil }
func (nc *Conn) FlushTimeout(timeout time.Duration) error          { return nil }
func (nc *Conn) FlushWithContext(ctx context.Context) error        { return nil }
func (nc *Conn) Close()                                            {}
func (nc *Conn) RTT() (time.Duration, error)                       { return 0, nil }
func (nc *Conn) MaxPayload() int64                                 { return 0 }
func (nc *Conn) JetStream(opts ...JSOpt) (JetStreamContext, error) { return nil, nil }

type EncodedConn struct {
	Conn *Conn
}

func NewEncodedConn(c *Conn, encType string) (*EncodedConn, error)       { return nil, nil }
func (c *EncodedConn) Publish(subject string, v any) error               { return nil }
func (c *EncodedConn) PublishRequest(subject, reply string, v any) error { return nil }
func (c *EncodedConn) Request(subject string, v any, vPtr any, timeout time.Duration) error {
	return nil
}

type JSOpt interface{ configureJSContext() }

type PubOpt interface{ configurePublish() }

type pubOptFn func()

func (pubOptFn) configurePublish() {}

func MsgId(id string) PubOpt { return pubOptFn(func() {}) }

type PubAck struct {
	Stream    string
	Sequence  uint64
	Duplicate bool
}

type PubAckFuture interface {
	Ok() <-chan *PubAck
	Err() <-chan error
	Msg() *Msg
}

type JetStream interface {
	Publish(subj string, data []byte, opts ...PubOpt) (*PubAck, error)
	PublishMsg(m *Msg, opts ...PubOpt) (*PubAck, error)
	PublishAsync(subj string, data []byte, opts ...PubOpt) (PubAckFuture, error)
	PublishMsgAsync(m *Msg, opts ...PubOpt) (PubAckFuture, error)
	PublishAsyncPending() int
	Subscribe(subj string, cb MsgHandler, opts ...SubOpt) (*Subscription, error)
	QueueSubscribe(subj, queue string, cb MsgHandler, opts ...SubOpt) (*Subscription, error)
	ChanSubscribe(subj string, ch chan *Msg, opts ...SubOpt) (*Subscription, error)
	ChanQueueSubscribe(subj, queue string, ch chan *Msg, opts ...SubOpt) (*Subscription, error)
	PullSubscribe(subj, durable string, opts ...SubOpt) (*Subscription, error)
}

type SubOpt interface{ configureSubscribe() }

type JetStreamManager interface {
	StreamNames() <-chan string
	KeyValue(bucket string) (KeyValue, error)
}

type JetStreamContext interface {
	JetStream
	JetStreamManager
}

// KeyValue is the legacy JetStream key-value bucket.
type KeyValue interface {
	Get(key string) (KeyValueEntry, error)
	Put(key string, value []byte) (revision uint64, err error)
	PutString(key string, value string) (revision uint64, err error)
	Create(key string, value []byte) (revision uint64, err error)
	Update(key string, value []byte, last uint64) (revision uint64, err error)
	Delete(key string) error
}

// KeyValueEntry is an entry of a legacy bucket.
type KeyValueEntry interface {
	Value() []byte
	Revision() uint64
}
