// Package nats is a minimal stand-in for github.com/nats-io/nats.go: the
// analyzer matches by package path, type and method names only.
package nats

type Options struct{ ReconnectBufSize int }

type Option func(*Options) error

func ReconnectBufSize(size int) Option { return nil }

type Conn struct{}

func Connect(url string, options ...Option) (*Conn, error) { return &Conn{}, nil }

func (nc *Conn) Publish(subj string, data []byte) error { return nil }

type Msg struct {
	Subject string
	Data    []byte
}

func (m *Msg) Respond(data []byte) error { return nil }
