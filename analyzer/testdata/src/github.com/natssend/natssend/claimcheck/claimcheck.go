// Package claimcheck is a stub of the natssend claimcheck package for the
// analyzer's tests.
package claimcheck

import (
	"context"
	"errors"

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
