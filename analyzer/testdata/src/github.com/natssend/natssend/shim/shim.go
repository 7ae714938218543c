// Package shim is a stub of the natssend shim for the analyzer's tests. It
// calls nats.go directly, as the real one does: the analyzer exempts it.
package shim

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/natssend/natssend/claimcheck"
)

func Connect(url string, opts ...nats.Option) (*nats.Conn, error) {
	return nats.Connect(url, append(opts, nats.ReconnectBufSize(-1))...)
}

func dial(url string) (*nats.Conn, error) {
	return nats.Connect(url)
}

func Publish(nc *nats.Conn, subject string, data []byte) error {
	return nc.Publish(subject, data)
}

func PublishMsg(nc *nats.Conn, m *nats.Msg) error { return nc.PublishMsg(m) }

func PublishContext(ctx context.Context, nc *nats.Conn, subject string, data []byte) error {
	return publish(ctx, nc, &nats.Msg{Subject: subject, Data: data})
}

func PublishMsgContext(ctx context.Context, nc *nats.Conn, m *nats.Msg) error {
	return publish(ctx, nc, m)
}

func publish(ctx context.Context, nc *nats.Conn, m *nats.Msg) error { return nc.PublishMsg(m) }

// Limit flushes: not a send.
func (c *Client) Limit(ctx context.Context) (int64, error) { return c.nc.MaxPayload(), c.nc.Flush() }

var ErrPayloadTooLarge = errors.New("natssend: payload too large")

type Outcome int

const (
	OutcomeOK Outcome = iota
	OutcomeNotRun
	OutcomeUnknown
	OutcomeRejected
)

func Classify(err error) Outcome {
	if err == nil {
		return OutcomeOK
	}
	return OutcomeUnknown
}

func MayHaveRun(err error) bool { return Classify(err) != OutcomeNotRun }

func Respond(req *nats.Msg, data []byte, h nats.Header) error {
	return req.RespondMsg(&nats.Msg{Subject: req.Reply, Data: data, Header: h})
}

func RespondError(req *nats.Msg, code, message string) error { return req.Respond(nil) }

func RespondMicro(req micro.Request, data []byte, h nats.Header) error { return req.Respond(data) }

func RespondMicroError(req micro.Request, code, message string) error {
	return req.Error(code, message, nil)
}

type Option func(*Client)

type CallOption func(*time.Duration)

type Client struct{ nc *nats.Conn }

func NewClient(nc *nats.Conn, opts ...Option) *Client { return &Client{nc: nc} }

func (c *Client) Request(ctx context.Context, subject string, data []byte, opts ...CallOption) (*nats.Msg, error) {
	return c.nc.RequestWithContext(ctx, subject, data)
}

func (c *Client) RequestMsg(ctx context.Context, m *nats.Msg, opts ...CallOption) (*nats.Msg, error) {
	return c.nc.RequestMsgWithContext(ctx, m)
}

// Operation IDs and the safe retry (issue 12).

func OperationID(id string) CallOption { return nil }

func Attempts(n int) CallOption { return nil }

type RetryOption func(*int)

func MaxAttempts(n int) RetryOption { return nil }

func Retry(ctx context.Context, op func(ctx context.Context) error, opts ...RetryOption) error {
	return op(ctx)
}

type (
	HandlerFunc       func(ctx context.Context, req *nats.Msg) ([]byte, error)
	HandlerOption     func(*handlerOpts) error
	StreamHandlerFunc func(ctx context.Context, req *nats.Msg, w *StreamWriter) error
	StreamWriter      struct{ nc *nats.Conn }
	handlerOpts       struct {
		nc    *nats.Conn
		store *claimcheck.Store
	}
)

func Handler(fn HandlerFunc, opts ...HandlerOption) nats.MsgHandler             { return nil }
func StreamHandler(fn StreamHandlerFunc, opts ...HandlerOption) nats.MsgHandler { return nil }
func JSONHandler[Req, Resp any](fn func(ctx context.Context, req Req) (Resp, error), opts ...HandlerOption) nats.MsgHandler {
	return nil
}
func Conn(nc *nats.Conn) HandlerOption                    { return nil }
func ServeClaimChecks(st *claimcheck.Store) HandlerOption { return nil }
func WithClaimChecks(st *claimcheck.Store) Option         { return nil }
func ResolveMicro(ctx context.Context, st *claimcheck.Store, req micro.Request) ([]byte, error) {
	return st.Resolve(ctx, &nats.Msg{Subject: req.Subject(), Data: req.Data()})
}

func OnError(f func(req *nats.Msg, err error)) HandlerOption { return nil }
