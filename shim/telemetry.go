package shim

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/stream"
	"github.com/natssend/natssend/internal/telemetry"
	"github.com/natssend/natssend/outcome"
)

// outcomeOf is err's natssend.outcome value and error code.
func outcomeOf(err error) (outcome, code string) {
	if err == nil {
		return telemetry.OutcomeOK, ""
	}
	var e *Error
	if errors.As(err, &e) && e != nil {
		code = e.Code
	}
	switch Classify(err) {
	case OutcomeNotRun:
		return telemetry.OutcomeNotRun, code
	case OutcomeRejected:
		return telemetry.OutcomeRejected, code
	}
	return telemetry.OutcomeUnknown, code
}

// endOp ends op with err's outcome.
func endOp(ctx context.Context, op *telemetry.Op, err error) {
	outcome, code := outcomeOf(err)
	op.End(ctx, err, outcome, code)
}

// inboxPrefix is nc's custom inbox prefix ("" for the default or a nil
// nc), which telemetry names as a temporary destination.
func inboxPrefix(nc *nats.Conn) string {
	if nc == nil {
		return ""
	}
	return nc.Opts.InboxPrefix
}

// publishTraced is publish with telemetry: a Producer span (when the
// publish has a context) whose trace context the message carries
// (injected before the size decision, so it counts like any header), and
// the sent-messages and duration metrics.
func publishTraced(ctx context.Context, nc *nats.Conn, m *nats.Msg, t telemetry.Tel) error {
	sctx, op, m := t.WithInbox(inboxPrefix(nc)).Send(ctx, telemetry.Producer, telemetry.OperationPublish, m)
	err := publishSend(sctx, nc, m)
	endOp(sctx, &op, err)
	return err
}

// publishTel is the telemetry of the Publish functions: the globals; the
// ones without a context record metrics only.
func publishTel(bounded bool) telemetry.Tel {
	var c *telemetry.Config
	t := c.Resolve()
	if bounded {
		return t.MetricsOnly()
	}
	return t
}

// requestTraced is RequestMsg's send with telemetry: a Client span whose
// trace context the request carries, an event per attempt, the metrics.
func (c *Client) requestTraced(ctx, callCtx context.Context, deadline time.Time, m *nats.Msg, co callOpts, t telemetry.Tel, w *connlimit.Watch) (*nats.Msg, error) {
	sctx, op, m := t.WithInbox(inboxPrefix(c.nc)).Send(ctx, telemetry.Client, telemetry.OperationRequest, m)
	callCtx = op.Context(callCtx) // a claim check's upload is the request's child
	var reply *nats.Msg
	var err error
	if co.attempts > 1 || c.store != nil {
		ct := &callTelemetry{op: &op}
		co.tele = ct
		reply, err = c.call(sctx, callCtx, deadline, m, co)
		if co.attempts > 1 {
			t.Attempts(sctx, m.Subject, ct.tried)
		}
	} else {
		reply, err = c.send(sctx, callCtx, deadline, m, co.opID)
	}
	err = deniedError(w.Denial(), err)
	endOp(sctx, &op, err)
	return reply, err
}

// callTelemetry is what Client.call records into: the call's operation
// and the number of attempts it made.
type callTelemetry struct {
	op    *telemetry.Op
	tried int
}

// attemptEvent records one attempt of a call on the call's span.
func attemptEvent(ct *callTelemetry, attempt int, err error) {
	if ct == nil {
		return
	}
	ct.tried = attempt
	op := ct.op
	if !op.Recording() {
		return
	}
	outcome, code := outcomeOf(err)
	kv := []telemetry.KV{telemetry.KeyAttempt.Int(attempt), telemetry.KeyOutcome.String(outcome)}
	if code != "" {
		kv = append(kv, telemetry.KeyErrorCode.String(code))
	}
	op.Event("attempt", kv...)
}

// startHandler extracts the caller's trace context from req and starts
// the handler's Server span, returning fn's context.
func (o *handlerOpts) startHandler(ctx context.Context, req *nats.Msg) (context.Context, telemetry.Op) {
	t := o.tel.Resolve()
	if !t.Active() {
		return ctx, telemetry.Op{}
	}
	r := telemetry.Received{Subject: req.Subject, Reply: req.Reply, Header: req.Header, BodySize: len(req.Data)}
	if req.Sub != nil {
		r.Queue = req.Sub.Queue
	}
	return t.Receive(ctx, telemetry.Server, telemetry.OperationRespond, r)
}

// claimCheckAttr adds the natssend.claimcheck.size attribute to the span
// of natssend's operation in ctx (never to a caller's span).
func claimCheckAttr(ctx context.Context, size int) {
	telemetry.SetSize(ctx, telemetry.KeyClaimCheckSize, int64(size))
}

// envelopeAttr sets messaging.message.envelope.size on the span of
// natssend's operation in ctx: size is the header block (natssend's own
// headers and the trace context included) plus body that the limit
// decision compared with max_payload, for the last message decided on (a
// claim-checked request's reference). 0 (no decision made) sets nothing.
func envelopeAttr(ctx context.Context, size int64) {
	if size > 0 {
		telemetry.SetSize(ctx, telemetry.KeyEnvelopeSize, size)
	}
}

// envelopeOf is envelopeAttr with m's size, computed only for a span that
// records.
func envelopeOf(ctx context.Context, m *nats.Msg) {
	if s := telemetry.SpanOf(ctx); s != nil && s.IsRecording() {
		envelopeAttr(ctx, int64(MsgSize(m)))
	}
}

// errUnresolved is a handler span's outcome when the request was answered
// before fn ran (a claim check it could not resolve).
var errUnresolved = outcome.New(CodeClaimCheckUnresolved, "claim-checked request not resolved", OutcomeRejected, nil)

// requestStreamTraced is RequestMsgStream with telemetry: a Client span
// from the request until the responder accepted the stream (its first
// frame) or the call failed, and the request carries its trace context,
// which StreamHandler continues.
func (c *Client) requestStreamTraced(ctx context.Context, m *nats.Msg, opts []StreamOption, t telemetry.Tel) (*ReplyStream, error) {
	sctx, op, m := t.WithInbox(inboxPrefix(c.nc)).Send(ctx, telemetry.Client, telemetry.OperationStream, m)
	rs, err := c.requestMsgStream(sctx, m, opts...)
	if err != nil {
		endOp(sctx, &op, err)
		return rs, err
	}
	// The span lasts until the stream's end: its end frame read, its
	// failure seen by the reader, or Close.
	end := func(err error, read int64) {
		if op.Recording() {
			op.SetAttributes(telemetry.KeyStreamBytes.Int64(read))
		}
		endOp(sctx, &op, err)
	}
	rs.r.OnEnd(end)
	return rs, nil
}

// streamAttrs adds the bytes a StreamHandler sent to its span.
func streamAttrs(op *telemetry.Op, s *stream.Sender) {
	if !op.Recording() {
		return
	}
	sent, rtt := s.Stats()
	op.SetAttributes(telemetry.KeyStreamBytes.Int64(sent))
	if rtt > 0 {
		op.SetAttributes(telemetry.KeyStreamRTT.Float64(rtt.Seconds()))
	}
}

// requestManyTraced is requestMany with telemetry: a Client span from the
// request to the end of the collection, whose outcome is ok when a reply
// arrived (natssend.replies counts them) and the first error's otherwise;
// the request carries its trace context.
func (c *Client) requestManyTraced(ctx context.Context, m *nats.Msg, opts []ManyOption, yield func(*nats.Msg, error) bool) {
	if c == nil || c.optErr != nil || ctx == nil {
		c.requestMany(ctx, m, opts, yield)
		return
	}
	t := c.tel.Resolve()
	if !t.Active() {
		c.requestMany(ctx, m, opts, yield)
		return
	}
	sctx, op, m := t.WithInbox(inboxPrefix(c.nc)).Send(ctx, telemetry.Client, telemetry.OperationMany, m)
	replies := 0
	var first error
	defer func() {
		op.SetAttributes(telemetry.KeyReplies.Int(replies))
		if replies > 0 {
			first = nil
		}
		endOp(sctx, &op, first)
	}()
	c.requestMany(sctx, m, opts, func(r *nats.Msg, err error) bool {
		if err == nil {
			replies++
		} else if first == nil {
			first = err
		}
		return yield(r, err)
	})
}
