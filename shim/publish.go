package shim

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/callerr"
	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/telemetry"
	"github.com/natssend/natssend/internal/wire"
)

// Publish publishes data on subject. See PublishMsgContext.
func Publish(nc *nats.Conn, subject string, data []byte) error {
	if st, link, ok := exact(nc, subject, 0, true); ok {
		st.BeforeSend()
		if err := nc.Publish(subject, data); err != nil {
			return publishRefused(context.Background(), nc, st, &nats.Msg{Subject: subject, Data: data}, link, err)
		}
		return nil
	}
	return publish(context.Background(), nc, &nats.Msg{Subject: subject, Data: data}, true)
}

// PublishMsg publishes m. See PublishMsgContext.
func PublishMsg(nc *nats.Conn, m *nats.Msg) error {
	if m != nil {
		if st, link, ok := exact(nc, m.Subject, len(m.Reply), true); ok {
			return publishDirect(context.Background(), nc, st, m, link)
		}
	}
	return publish(context.Background(), nc, m, true)
}

// PublishContext publishes data on subject. See PublishMsgContext.
func PublishContext(ctx context.Context, nc *nats.Conn, subject string, data []byte) error {
	if ctx != nil && ctx.Err() == nil {
		if st, link, ok := exact(nc, subject, 0, false); ok {
			st.BeforeSend()
			if err := nc.Publish(subject, data); err != nil {
				return publishRefused(ctx, nc, st, &nats.Msg{Subject: subject, Data: data}, link, err)
			}
			return nil
		}
	}
	return publish(ctx, nc, &nats.Msg{Subject: subject, Data: data}, false)
}

// PublishMsgContext publishes m (subject, reply, headers, body) once.
//
// A message that fits the connection's current max_payload (and the path
// cap set with CapPayload), header block included, is published
// unchanged. One that does not is refused before anything is written:
// the error has CodePayloadTooLarge, matches ErrPayloadTooLarge and
// nats.ErrMaxPayload, and Classify gives OutcomeNotRun, as nats.go itself
// refuses it. Nothing is ever stored: these functions make no claim
// check, so a service moved from nc.Publish to Publish (natssend-lint
// -fix) keeps its behaviour and its receivers. To send larger messages on
// purpose, set up a claimcheck.Store and use its PublishMsg, after the
// receivers resolve claim checks.
//
// ctx bounds the wait for the connection's limit after a (re)connect; a
// message that fits is handed to nats.go without waiting for anything.
func PublishMsgContext(ctx context.Context, nc *nats.Conn, m *nats.Msg) error {
	if ctx != nil && m != nil && ctx.Err() == nil {
		if st, link, ok := exact(nc, m.Subject, len(m.Reply), false); ok {
			return publishDirect(ctx, nc, st, m, link)
		}
	}
	return publish(ctx, nc, m, false)
}

// exact is the hot path's check, made by each Publish function once its
// own arguments are not nil (and its context not done): there is no
// telemetry to record (metricsOnly: no metrics, for the calls without a
// context, which start no span) and nats.go's own check is the decision
// (connlimit.State.Exact; nats.go checks the subject, the reply subject
// and the header keys before it writes anything, as callerr.CheckMsg does, unless
// the connection skips its subject check, but not their length: the
// subject, with a reply subject of replyLen bytes, must fit the server's
// control line, wire.ControlLineFits). Then the message goes straight to
// nats.go, and only an error takes the rest of the path (publishRefused).
func exact(nc *nats.Conn, subject string, replyLen int, metricsOnly bool) (*connlimit.State, uint64, bool) {
	if nc == nil || nc.Opts.SkipSubjectValidation || !wire.ControlLineFits(subject, replyLen) || !telemetry.GlobalsIdle(metricsOnly) {
		return nil, 0, false
	}
	st := connlimit.For(nc)
	link, ok := st.Exact()
	return st, link, ok
}

// publish is every Publish function past the hot path (exact); noCtx
// says the call took no context (Publish, PublishMsg), which records
// metrics but starts no span.
func publish(ctx context.Context, nc *nats.Conn, m *nats.Msg, noCtx bool) error {
	if err := checkSend(ctx, nc, m); err != nil {
		return err
	}
	if telemetry.GlobalsIdle(noCtx) {
		return publishSend(ctx, nc, m)
	}
	if t := publishTel(noCtx); t.Active() {
		return publishTraced(ctx, nc, m, t)
	}
	return publishSend(ctx, nc, m)
}

// publishSend is publish after its input check and telemetry: nats.go's
// own check decides where it can (connlimit.State.Exact), and a refusal
// (nothing was written) takes the one send loop (publishDecided).
func publishSend(ctx context.Context, nc *nats.Conn, m *nats.Msg) error {
	st := connlimit.For(nc)
	if link, ok := st.Exact(); ok && !nc.Opts.SkipSubjectValidation && wire.ControlLineFits(m.Subject, len(m.Reply)) {
		return publishDirect(ctx, nc, st, m, link)
	}
	return publishDecided(ctx, nc, st, m)
}

// publishDirect hands m to nats.go, whose own check decides (see exact):
// a message with no headers and no reply subject as nc.Publish, which is
// what nc.PublishMsg does with it less its header pass. A write error
// takes the rest of the path (publishRefused).
func publishDirect(ctx context.Context, nc *nats.Conn, st *connlimit.State, m *nats.Msg, link uint64) error {
	st.BeforeSend()
	var err error
	if m.Header == nil && m.Reply == "" {
		err = nc.Publish(m.Subject, m.Data)
	} else {
		err = nc.PublishMsg(m)
	}
	if err != nil {
		return publishRefused(ctx, nc, st, m, link, err)
	}
	return nil
}

// publishRefused is what follows a write error on the fast path: a
// refusal for the message's size (nothing was written) goes through the
// one send loop (publishDecided); a refused subject or header key gets
// callerr.CheckMsg's error; anything else is the send's own error.
func publishRefused(ctx context.Context, nc *nats.Conn, st *connlimit.State, m *nats.Msg, link uint64, err error) error {
	if st.Refused(link, err) {
		return publishDecided(ctx, nc, st, m)
	}
	if errors.Is(err, nats.ErrBadSubject) || errors.Is(err, nats.ErrBadHeaderMsg) {
		if merr := callerr.CheckMsg(m.Subject, m.Reply, m.Header); merr != nil {
			return merr
		}
	}
	return callerr.SendError(ctx, err, false)
}

// publishDecided sends m through the one send loop (connlimit.State.Send):
// wait for the link's limit, then send or refuse. The package-level
// Publish functions never make a claim check (only a claimcheck.Store the
// service set up does): a message over the limit is refused with
// PAYLOAD_TOO_LARGE and nothing is published or stored, as nats.go itself
// refuses it.
func publishDecided(ctx context.Context, nc *nats.Conn, st *connlimit.State, m *nats.Msg) error {
	if err := callerr.CheckMsg(m.Subject, m.Reply, m.Header); err != nil {
		return err
	}
	size := int64(MsgSize(m))
	v, limit, err := st.Send(ctx, connlimit.Send{
		Decide: func(limit int64) connlimit.Verdict {
			return connlimit.Decide(size, limit, connlimit.NoClaimCheck)
		},
		Write: func() error { return nc.PublishMsg(m) },
	})
	if v == connlimit.Fits || err != nil {
		return callerr.SendError(ctx, err, false)
	}
	return callerr.TooLarge("message", size, limit, nil)
}

// checkSend is the input check every publish makes before anything else:
// the context, the connection and the message. The subjects and header
// keys are checked by nats.go on the fast path and by publishSend before
// any other (callerr.CheckMsg).
func checkSend(ctx context.Context, nc *nats.Conn, m *nats.Msg) error {
	if err := checkInputs(ctx, nc, m, true); err != nil {
		return err
	}
	return ctxDone(ctx)
}

// checkControlLine is wire.CheckControlLine as a *Error.
func checkControlLine(subject string, replyLen int) error {
	return callerr.InvalidMsg(wire.CheckControlLine(subject, replyLen))
}
