// Package micro is a stub of github.com/nats-io/nats.go/micro v1.55.0 for
// the analyzer's tests.
package micro

import "github.com/nats-io/nats.go"

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
