// Package claimcheck is a stub of the natssend claimcheck package for the
// analyzer's tests.
package claimcheck

import (
	"context"
	"errors"
	"io"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

type Store struct {
	nc *nats.Conn
	js jetstream.JetStream
}

func New(ctx context.Context, js jetstream.JetStream) (*Store, error) { return &Store{js: js}, nil }

func (s *Store) PublishMsg(ctx context.Context, m *nats.Msg) error { return s.nc.PublishMsg(m) }

func (s *Store) PublishJetStream(ctx context.Context, m *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	return s.js.PublishMsg(ctx, m, opts...)
}

var (
	ErrNotPublished = errors.New("claimcheck: nothing was published")
	ErrClosed       = errors.New("claimcheck: store closed")
	ErrTooLarge     = errors.New("claimcheck: payload too large")
)

func (s *Store) Prepare(ctx context.Context, m *nats.Msg, reserve int) (*nats.Msg, error) {
	_, err := s.js.PublishMsg(ctx, m)
	return m, err
}

func (s *Store) Resolve(ctx context.Context, m *nats.Msg) ([]byte, error) { return m.Data, nil }

const (
	HeaderRef  = "Claim-Check"
	HeaderSize = "Claim-Check-Size"
)

type (
	MsgHandler            func(m *nats.Msg)
	ErrorHandler          func(m *nats.Msg, err error)
	JetStreamErrorHandler func(msg jetstream.Msg, err error)
	SubscribeOpt          interface{ applySubscribe() }
	ConsumeOpt            interface{ applyConsume() }
	MessagesOpt           interface{ applyMessages() }
)

func IsClaimCheck(m *nats.Msg) bool { return m != nil && m.Header.Get(HeaderRef) != "" }

func (s *Store) Open(ctx context.Context, m *nats.Msg) (io.ReadCloser, error) { return nil, nil }

func (s *Store) ResolveJetStream(ctx context.Context, msg jetstream.Msg) ([]byte, error) {
	return msg.Data(), nil
}

func (s *Store) Subscribe(subject string, h MsgHandler, onErr ErrorHandler, opts ...SubscribeOpt) (*nats.Subscription, error) {
	return s.nc.Subscribe(subject, func(m *nats.Msg) { h(m) })
}

func (s *Store) QueueSubscribe(subject, queue string, h MsgHandler, onErr ErrorHandler, opts ...SubscribeOpt) (*nats.Subscription, error) {
	return s.nc.QueueSubscribe(subject, queue, func(m *nats.Msg) { h(m) })
}

func (s *Store) Consume(c jetstream.Consumer, h jetstream.MessageHandler, onErr JetStreamErrorHandler, opts ...ConsumeOpt) (jetstream.ConsumeContext, error) {
	return c.Consume(h)
}

type Messages struct{ it jetstream.MessagesContext }

func (s *Store) Messages(c jetstream.Consumer, opts ...MessagesOpt) (*Messages, error) {
	return nil, nil
}

func (m *Messages) Next(opts ...jetstream.NextOpt) (jetstream.Msg, error) { return m.it.Next(opts...) }
