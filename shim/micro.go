package shim

import (
	"context"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/natssend/natssend/internal/callerr"
)

// AddEndpoint adds s to a micro service (or one of its groups) as the
// endpoint name, with micro's options (micro.WithEndpointSubject,
// micro.WithEndpointQueueGroup, micro.WithEndpointMetadata, ...). nc must
// be the connection the micro service was made on (micro.AddService(nc,
// ...)): s's replies, claim checks and stream frames decide against its
// limit. The endpoint keeps what micro gives: discovery ($SRV.PING,
// $SRV.INFO) and stats ($SRV.STATS). Replies and error replies go through
// micro's Request, so its stats count requests, processing time and
// errors (an error reply, whatever its code, is one error, with its code
// and message as the endpoint's last error). A Service that cannot serve
// (see Serve) is refused here, before anything is added.
//
//	svc, err := micro.AddService(nc, micro.Config{Name: "orders", Version: "1.0.0"})
//	...
//	err = shim.AddEndpoint(svc, nc, "create", shim.JSON(create))
func AddEndpoint(g micro.Group, nc *nats.Conn, name string, s Service, opts ...micro.EndpointOpt) error {
	if g == nil {
		return notSent(CodeInvalidArgument, "nil micro service or group; not added", nats.ErrInvalidArg)
	}
	if err := s.check(nc); err != nil {
		return err
	}
	h := s.handler(nc)
	if err := g.AddEndpoint(name, micro.HandlerFunc(func(req micro.Request) {
		h(req, &nats.Msg{Subject: req.Subject(), Reply: req.Reply(), Header: nats.Header(req.Headers()), Data: req.Data()})
	}), opts...); err != nil {
		return notSent(CodeInvalidArgument, "adding the micro endpoint "+name+" failed; not added", err)
	}
	return nil
}

// microKey is the context key of the micro request a handler serves.
type microKey struct{}

// withMicro returns ctx carrying mreq, the micro request the handler
// serves (ctx itself for nil): its replies go through it (see replyWith).
func withMicro(ctx context.Context, mreq micro.Request) context.Context {
	if mreq == nil {
		return ctx
	}
	return context.WithValue(ctx, microKey{}, mreq)
}

// microOf returns the micro request a handler's ctx carries, or nil.
func microOf(ctx context.Context) micro.Request {
	mreq, _ := ctx.Value(microKey{}).(micro.Request)
	return mreq
}

// replyWith sends reply to req: through the micro request ctx carries
// (see withMicro), or with req.RespondMsg.
func replyWith(ctx context.Context, req *nats.Msg, reply *nats.Msg) error {
	if mreq := microOf(ctx); mreq != nil {
		return microReply(mreq, reply.Data, reply.Header)
	}
	return req.RespondMsg(reply)
}

// microReply sends data with h through mreq's Respond, which micro counts
// in the endpoint's stats (every micro reply of the shim goes here).
func microReply(mreq micro.Request, data []byte, h nats.Header) error {
	var opts []micro.RespondOpt
	if len(h) > 0 {
		opts = append(opts, micro.WithHeaders(micro.Headers(h)))
	}
	return microMaxPayload(mreq.Respond(data, opts...))
}

// microErrorReply sends a micro error reply (code and description
// headers, the description cut to maxErrorMessage) through mreq's Error,
// which micro counts as the endpoint's last error; rejected marks it as a
// rejection (HeaderOutcome). Every micro error reply of the shim goes here.
func microErrorReply(mreq micro.Request, code, message string, rejected bool) error {
	var opts []micro.RespondOpt
	if rejected {
		opts = append(opts, micro.WithHeaders(micro.Headers{HeaderOutcome: {outcomeRejected}}))
	}
	return microMaxPayload(mreq.Error(code, callerr.Truncate(message, maxErrorMessage), nil, opts...))
}
