package synthgen

import "strings"

// natsStub is a small stand-in for github.com/nats-io/nats.go with the API
// the generated code uses. The analyzer matches by package path and names,
// so it treats the stub like the real module.
var natsStub = strings.TrimSpace(`
// Package nats is a stub of github.com/nats-io/nats.go for the benchmark.
package nats

import (
	"context"
	"errors"
	"time"
)

var ErrTimeout = errors.New("nats: timeout")

type Header map[string][]string

type Msg struct {
	Subject string
	Reply   string
	Header  Header
	Data    []byte
}

func (m *Msg) Respond(data []byte) error { return nil }

type Subscription struct{ Subject string }

type MsgHandler func(msg *Msg)

type Options struct {
	Name             string
	ReconnectBufSize int
}

type Option func(*Options) error

func Connect(url string, options ...Option) (*Conn, error) { return &Conn{}, nil }

func Name(name string) Option { return func(o *Options) error { o.Name = name; return nil } }

func ReconnectBufSize(size int) Option {
	return func(o *Options) error { o.ReconnectBufSize = size; return nil }
}

type Conn struct{ opts Options }

func (nc *Conn) Publish(subj string, data []byte) error { return nil }

func (nc *Conn) Request(subj string, data []byte, timeout time.Duration) (*Msg, error) {
	return &Msg{}, nil
}

func (nc *Conn) RequestWithContext(ctx context.Context, subj string, data []byte) (*Msg, error) {
	return &Msg{}, nil
}

func (nc *Conn) Subscribe(subj string, cb MsgHandler) (*Subscription, error) {
	return &Subscription{Subject: subj}, nil
}
`) + "\n"
