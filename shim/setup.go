package shim

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/callerr"
	"github.com/natssend/natssend/internal/wire"
)

// The one call set-up: what every send of this package checks before it
// writes anything (Publish*, a Client's Request, RequestMsg with
// Attempts, RequestMany and RequestStream), in one order, each failure
// INVALID_ARGUMENT or the context's code, not run.

// checkInputs refuses a nil context, message (when needMsg) or connection.
func checkInputs(ctx context.Context, nc *nats.Conn, m *nats.Msg, needMsg bool) error {
	switch {
	case ctx == nil:
		return notSent(CodeInvalidArgument, "nil context; not sent", nats.ErrInvalidContext)
	case needMsg && m == nil:
		return notSent(CodeInvalidArgument, "nil message; not sent", nats.ErrInvalidMsg)
	case nc == nil:
		return notSent(CodeInvalidArgument, "nil connection; not sent", nats.ErrInvalidConnection)
	}
	return nil
}

// ctxDone refuses a context that ended before anything was sent.
func ctxDone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return notSent(callerr.CtxCode(err), "context done before sending; not sent", err)
	}
	return nil
}

// connUsable refuses a closed or reconnecting connection before a send
// (each attempt's: a later attempt may find it back).
func connUsable(nc *nats.Conn) error {
	switch {
	case nc.IsClosed():
		return notSent(CodeUnavailable, "connection closed; not sent", nats.ErrConnectionClosed)
	case nc.IsReconnecting():
		return notSent(CodeUnavailable, "connection is reconnecting; not sent", nats.ErrConnectionReconnecting)
	}
	return nil
}

// setUp is the call set-up of every Client verb: the Client's own options
// (Err), the inputs, the call's options (parse, the verb's typed option
// set), the message (subject, header keys, and the control line with the
// room its reply inbox takes), a context that already ended, and the
// call's deadline: the earlier of ctx's and the call's Timeout (the
// Client's WithTimeout when the call sets none).
func (c *Client) setUp(ctx context.Context, m *nats.Msg, parse func() (callOpts, error)) (callOpts, time.Time, error) {
	if err := c.Err(); err != nil {
		return callOpts{}, time.Time{}, err
	}
	if err := checkInputs(ctx, c.nc, m, true); err != nil {
		return callOpts{}, time.Time{}, err
	}
	co, err := parse()
	if err != nil {
		return co, time.Time{}, err
	}
	if err := callerr.CheckMsg(m.Subject, "", m.Header); err != nil {
		return co, time.Time{}, err
	}
	if err := checkControlLine(m.Subject, wire.InboxReserve(c.nc.Opts.InboxPrefix)); err != nil {
		return co, time.Time{}, err
	}
	if err := ctxDone(ctx); err != nil {
		return co, time.Time{}, err
	}
	deadline := time.Now().Add(c.callTimeout(co))
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	return co, deadline, nil
}
