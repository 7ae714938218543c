// Package handlers builds shim handlers with and without the connection // want package:"uses nats.go"
// they need.
package handlers

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/natssend/natssend/shim"
)

type Query struct{ ID string }
type Answer struct{ Name string }

type service struct {
	nc   *nats.Conn
	opts []shim.HandlerOption
}

func lookup(ctx context.Context, q Query) (Answer, error) { return Answer{Name: q.ID}, nil }

func echo(ctx context.Context, req *nats.Msg) ([]byte, error) { return req.Data, nil }

func (s *service) register() error {
	if _, err := s.nc.Subscribe("svc.echo", shim.Handler(echo)); err != nil { // want `shim.Handler built without shim.Conn: its replies cannot use the connection's limit`
		return err
	}
	if _, err := s.nc.QueueSubscribe("svc.lookup", "svc", shim.JSONHandler(lookup, shim.OnError(func(*nats.Msg, error) {}))); err != nil { // want `shim.JSONHandler built without shim.Conn`
		return err
	}
	if _, err := s.nc.Subscribe("svc.export", shim.StreamHandler(func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error { // want `shim.StreamHandler built without shim.Conn: it answers every request with an INTERNAL error`
		return nil
	})); err != nil {
		return err
	}
	// With the connection: fine.
	if _, err := s.nc.Subscribe("svc.echo2", shim.Handler(echo, shim.Conn(s.nc))); err != nil {
		return err
	}
	// Options from elsewhere may include Conn: not judged.
	if _, err := s.nc.Subscribe("svc.echo3", shim.Handler(echo, s.opts...)); err != nil {
		return err
	}
	withConn := shim.Conn(s.nc)
	_, err := s.nc.Subscribe("svc.echo4", shim.Handler(echo, withConn))
	return err
}

// Built first, subscribed elsewhere: reported, with no fix.
func handlerFor(d time.Duration) nats.MsgHandler {
	return shim.Handler(echo, shim.OnError(nil)) // want `shim.Handler built without shim.Conn`
}

// A handler called on the spot (a test driving it by hand) is still built
// without its connection.
func callDirectly(m *nats.Msg) {
	shim.Handler(echo)(m) // want `shim.Handler built without shim.Conn`
}
