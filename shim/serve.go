package shim

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/natssend/natssend/internal/callerr"
	"github.com/natssend/natssend/internal/connlimit"
)

// A Service is a request handler for Serve and ServeQueue, made with
// Unary, JSON or Stream. Unlike the nats.MsgHandler of Handler,
// JSONHandler and StreamHandler, it is given the connection it is
// subscribed on by construction: there is no Conn option to forget, and a
// Service that cannot serve (a nil function, an invalid option) is refused
// by Serve, before anything is subscribed, never at its first request.
// The zero Service is invalid.
type Service struct {
	handler func(nc *nats.Conn) func(micro.Request, *nats.Msg)
	err     error // why it cannot serve
	conn    *nats.Conn
}

// Unary makes a Service of fn, with Handler's behaviour: one reply, or an
// error reply, per request.
func Unary(fn HandlerFunc, opts ...HandlerOption) Service {
	if fn == nil {
		return Service{err: notSent(CodeInvalidArgument, "Unary(nil): a nil HandlerFunc", nats.ErrInvalidArg)}
	}
	return service(opts, func(opts []HandlerOption) func(micro.Request, *nats.Msg) { return handler(fn, opts) })
}

// JSON makes a Service of fn, with JSONHandler's behaviour: the request
// decoded as JSON into Req, the reply encoded as JSON.
func JSON[Req, Resp any](fn func(ctx context.Context, req Req) (Resp, error), opts ...HandlerOption) Service {
	if fn == nil {
		return Service{err: notSent(CodeInvalidArgument, "JSON(nil): a nil function", nats.ErrInvalidArg)}
	}
	return service(opts, func(opts []HandlerOption) func(micro.Request, *nats.Msg) { return handler(jsonFunc(fn), opts) })
}

// Stream makes a Service of fn, with StreamHandler's behaviour: a
// transfer stream per request, for Client.RequestStream.
func Stream(fn StreamHandlerFunc, opts ...HandlerOption) Service {
	if fn == nil {
		return Service{err: notSent(CodeInvalidArgument, "Stream(nil): a nil StreamHandlerFunc", nats.ErrInvalidArg)}
	}
	return service(opts, func(opts []HandlerOption) func(micro.Request, *nats.Msg) { return streamHandler(fn, opts) })
}

// service checks opts now and returns the Service that build makes with
// them and the connection's Conn option.
func service(opts []HandlerOption, build func(opts []HandlerOption) func(micro.Request, *nats.Msg)) Service {
	var o handlerOpts
	if err := applyOptions(&o, opts); err != nil {
		return Service{err: err}
	}
	s := Service{handler: func(nc *nats.Conn) func(micro.Request, *nats.Msg) {
		return build(append(append([]HandlerOption(nil), opts...), Conn(nc)))
	}}
	if o.st != nil {
		s.conn = o.st.Conn()
	}
	return s
}

// Serve subscribes s on subject on nc, which s's replies (and a stream's
// frames and control inbox) use: see Conn. It returns the subscription,
// or a *Error with OutcomeNotRun and nothing subscribed: INVALID_ARGUMENT
// for a nil connection, an invalid subject, the zero Service, one made
// with a nil function or an invalid option, or a Conn option naming
// another connection; PERMISSION_DENIED when the server refuses the
// subscription (on a connection made by Connect, which hears of the
// refusal: Serve waits one round trip for the server's verdict); nats.go's
// own error otherwise (a closed connection: UNAVAILABLE).
func Serve(nc *nats.Conn, subject string, s Service) (*nats.Subscription, error) {
	return serve(nc, subject, "", s)
}

// ServeQueue is Serve with a queue subscription: the members of queue
// share the requests on subject, each request going to one of them.
func ServeQueue(nc *nats.Conn, subject, queue string, s Service) (*nats.Subscription, error) {
	if queue == "" {
		return nil, notSent(CodeInvalidArgument, "ServeQueue: an empty queue group (use Serve for a plain subscription)", nats.ErrBadQueueName)
	}
	return serve(nc, subject, queue, s)
}

func serve(nc *nats.Conn, subject, queue string, s Service) (*nats.Subscription, error) {
	if err := s.check(nc); err != nil {
		return nil, err
	}
	h := s.handler(nc)
	cb := func(m *nats.Msg) { h(nil, m) }
	sub, err := connlimit.For(nc).Subscribe(connlimit.DefaultFlushTimeout, func() (*nats.Subscription, error) {
		if queue == "" {
			return nc.Subscribe(subject, cb)
		}
		return nc.QueueSubscribe(subject, queue, cb)
	})
	if err != nil {
		return nil, subscribeError(subject, queue, err)
	}
	return sub, nil
}

// check refuses a Service that cannot serve on nc.
func (s Service) check(nc *nats.Conn) error {
	switch {
	case nc == nil:
		return notSent(CodeInvalidArgument, "nil connection; not subscribed", nats.ErrInvalidConnection)
	case s.err != nil:
		return s.err
	case s.handler == nil:
		return notSent(CodeInvalidArgument, "the zero Service: make one with Unary, JSON or Stream; not subscribed", nats.ErrInvalidArg)
	case s.conn != nil && s.conn != nc:
		return notSent(CodeInvalidArgument, "the Service's Conn option names another connection than the one it is subscribed on; not subscribed", nats.ErrInvalidConnection)
	}
	return nil
}

// subscribeError maps nats.go's refusal of a subscription (a bad subject
// or queue name, a closed connection) or the server's (a permission
// violation): nothing is subscribed.
func subscribeError(subject, queue string, err error) error {
	where := fmt.Sprintf("%q", subject)
	if queue != "" {
		where += fmt.Sprintf(" in queue group %q", queue)
	}
	var d *connlimit.Denial
	if errors.As(err, &d) {
		return notSent(CodePermissionDenied, "permission denied: the server refused the subscription to "+where+"; not subscribed", err)
	}
	return notSent(Describe(callerr.SendError(context.Background(), err, false)).Code, "subscribing on "+where+" failed; not subscribed", err)
}
