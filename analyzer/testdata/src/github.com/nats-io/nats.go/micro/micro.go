// Package micro is a stub of github.com/nats-io/nats.go/micro v1.55.0 for
// the analyzer's tests.
package micro

import (
	"context"

	"github.com/nats-io/nats.go"
)

type (
	Handler interface {
		Handle(Request)
	}

	HandlerFunc func(Request)

	Request interface {
		Respond([]byte, ...RespondOpt) error
		RespondJSON(any, ...RespondOpt) error
		Error(code, description string, data []byte, opts ...RespondOpt) error
		Data() []byte
		Headers() Headers
		Subject() string
		Reply() string
	}

	Headers nats.Header

	RespondOpt func(*nats.Msg)
)

func (fn HandlerFunc) Handle(req Request) { fn(req) }

func ContextHandler(ctx context.Context, handler func(context.Context, Request)) Handler {
	return HandlerFunc(func(req Request) { handler(ctx, req) })
}

type (
	EndpointOpt func(*endpointOpts) error
	GroupOpt    func(*groupOpts)

	endpointOpts struct{ subject string }
	groupOpts    struct{ queue string }

	Service interface {
		AddEndpoint(string, Handler, ...EndpointOpt) error
		AddGroup(string, ...GroupOpt) Group
		Stop() error
	}

	Group interface {
		AddGroup(string, ...GroupOpt) Group
		AddEndpoint(string, Handler, ...EndpointOpt) error
	}

	Config struct {
		Name     string
		Version  string
		Endpoint *EndpointConfig
	}

	EndpointConfig struct {
		Subject string
		Handler Handler
	}
)

func AddService(nc *nats.Conn, config Config) (Service, error) { return nil, nil }

func WithEndpointSubject(subject string) EndpointOpt {
	return func(o *endpointOpts) error { o.subject = subject; return nil }
}
