package shim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/telemetry"
	"github.com/natssend/natssend/internal/wire"
)

// DefaultPublishTimeout bounds Publish and PublishMsg, which take no
// context: the claim check upload of a message that does not fit included.
// Use PublishContext or PublishMsgContext for another deadline.
const DefaultPublishTimeout = time.Minute

// Publish publishes data on subject. See PublishMsgContext; a claim check
// upload is bounded by DefaultPublishTimeout.
func Publish(nc *nats.Conn, subject string, data []byte) error {
	if st, link, ok := exact(nc, subject, 0, true); ok {
		st.BeforeSend()
		if err := nc.Publish(subject, data); err != nil {
			return publishRefused(context.Background(), nc, st, &nats.Msg{Subject: subject, Data: data}, link, err, true)
		}
		return nil
	}
	return publish(context.Background(), nc, &nats.Msg{Subject: subject, Data: data}, true)
}

// PublishMsg publishes m. See PublishMsgContext; a claim check upload is
// bounded by DefaultPublishTimeout.
func PublishMsg(nc *nats.Conn, m *nats.Msg) error {
	if m != nil {
		if st, link, ok := exact(nc, m.Subject, len(m.Reply), true); ok {
			return publishDirect(context.Background(), nc, st, m, link, true)
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
				return publishRefused(ctx, nc, st, &nats.Msg{Subject: subject, Data: data}, link, err, false)
			}
			return nil
		}
	}
	return publish(ctx, nc, &nats.Msg{Subject: subject, Data: data}, false)
}

// PublishMsgContext publishes m (subject, reply, headers, body) once.
//
// A message that fits the connection's current max_payload, header block
// included, is published unchanged. One that does not is sent as a claim
// check: its body goes to the connection's claim check store (the default
// bucket, created on first use, one store per connection) and a reference
// is published instead; receivers get the body back with
// claimcheck.(*Store).Resolve or the claimcheck subscription helpers. A
// body over claimcheck.MaxSize, or a connection without JetStream, gives a
// PAYLOAD_TOO_LARGE error and nothing is published. ctx bounds the wait
// for the connection's limit and the claim check; a message that fits is
// handed to nats.go without waiting for anything.
//
// For another bucket, TTL or storage, make a claimcheck.Store and use its
// PublishMsg.
func PublishMsgContext(ctx context.Context, nc *nats.Conn, m *nats.Msg) error {
	if ctx != nil && m != nil && ctx.Err() == nil {
		if st, link, ok := exact(nc, m.Subject, len(m.Reply), false); ok {
			return publishDirect(ctx, nc, st, m, link, false)
		}
	}
	return publish(ctx, nc, m, false)
}

// exact is the hot path's check, made by each Publish function once its
// own arguments are not nil (and its context not done): there is no
// telemetry to record (metricsOnly: no metrics, for the calls without a
// context, which start no span) and nats.go's own check is the decision
// (connlimit.State.Exact; nats.go checks the subject, the reply subject
// and the header keys before it writes anything, as checkMsg does, unless
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

// publish is every Publish function past the hot path (exact); bounded
// says whether a claim check gets DefaultPublishTimeout (the calls
// without a context).
func publish(ctx context.Context, nc *nats.Conn, m *nats.Msg, bounded bool) error {
	if err := checkSend(ctx, nc, m); err != nil {
		return err
	}
	if telemetry.GlobalsIdle(bounded) {
		return publishSend(ctx, nc, m, bounded)
	}
	if t := publishTel(bounded); t.Active() {
		return publishTraced(ctx, nc, m, bounded, t)
	}
	return publishSend(ctx, nc, m, bounded)
}

// publishSend is publish after its input check and telemetry: nats.go's
// own check decides where it can (connlimit.State.Exact), and a refusal
// (nothing was written) takes the one send loop (publishDecided).
func publishSend(ctx context.Context, nc *nats.Conn, m *nats.Msg, bounded bool) error {
	st := connlimit.For(nc)
	if link, ok := st.Exact(); ok && !nc.Opts.SkipSubjectValidation && wire.ControlLineFits(m.Subject, len(m.Reply)) {
		return publishDirect(ctx, nc, st, m, link, bounded)
	}
	return publishDecided(ctx, nc, st, m, bounded)
}

// publishDirect hands m to nats.go, whose own check decides (see exact):
// a message with no headers and no reply subject as nc.Publish, which is
// what nc.PublishMsg does with it less its header pass. A write error
// takes the rest of the path (publishRefused).
func publishDirect(ctx context.Context, nc *nats.Conn, st *connlimit.State, m *nats.Msg, link uint64, bounded bool) error {
	st.BeforeSend()
	var err error
	if m.Header == nil && m.Reply == "" {
		err = nc.Publish(m.Subject, m.Data)
	} else {
		err = nc.PublishMsg(m)
	}
	if err != nil {
		return publishRefused(ctx, nc, st, m, link, err, bounded)
	}
	return nil
}

// publishRefused is what follows a write error on the fast path: a
// refusal for the message's size (nothing was written) goes through the
// one send loop (publishDecided); a refused subject or header key gets
// checkMsg's error; anything else is the send's own error.
func publishRefused(ctx context.Context, nc *nats.Conn, st *connlimit.State, m *nats.Msg, link uint64, err error, bounded bool) error {
	if st.Refused(link, err) {
		return publishDecided(ctx, nc, st, m, bounded)
	}
	if errors.Is(err, nats.ErrBadSubject) || errors.Is(err, nats.ErrBadHeaderMsg) {
		if merr := checkMsg(m.Subject, m.Reply, m.Header); merr != nil {
			return merr
		}
	}
	return sendError(ctx, err, false)
}

// publishDecided sends m through the one send loop (connlimit.State.Send):
// wait for the link's limit, then send, claim check or refuse. It checks
// the message first: a claim check uploads before the reference, which
// carries the subjects and headers, is published.
func publishDecided(ctx context.Context, nc *nats.Conn, st *connlimit.State, m *nats.Msg, bounded bool) error {
	if err := checkMsg(m.Subject, m.Reply, m.Header); err != nil {
		return err
	}
	v, limit, err := st.Send(ctx, connlimit.Send{
		Decide: func(limit int64) connlimit.Verdict {
			return connlimit.Decide(int64(MsgSize(m)), limit, connlimit.NoClaimCheck)
		},
		Write: func() error { return nc.PublishMsg(m) },
	})
	if v == connlimit.Fits || err != nil {
		return sendError(ctx, err, false)
	}
	// It does not fit: the store decides between a claim check and a refusal.
	if _, ok := ctx.Deadline(); bounded && !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultPublishTimeout)
		defer cancel()
	}
	return publishClaimCheck(ctx, st, m, limit)
}

// publishClaimCheck sends m, which does not fit the limit it was decided
// against, through the connection's claim check store.
func publishClaimCheck(ctx context.Context, st *connlimit.State, m *nats.Msg, limit int64) error {
	store, err := claimStore(ctx, st)
	if err != nil {
		size := int64(MsgSize(m))
		return &Error{
			Code:    CodePayloadTooLarge,
			Message: fmt.Sprintf("message of %d bytes exceeds the %d-byte limit and the claim check store is unavailable; not sent", size, limit),
			Size:    size, Limit: limit, outcome: OutcomeNotRun,
			err: fmt.Errorf("%w; %w", nats.ErrMaxPayload, err),
		}
	}
	if err := store.PublishMsg(ctx, m); err != nil {
		return claimError(ctx, m, limit, err)
	}
	claimCheckAttr(ctx, len(m.Data))
	return nil
}

// checkSend is the input check every publish makes before anything else:
// the context, the connection and the message. The subjects and header
// keys are checked by nats.go on the fast path and by publishSend before
// any other (checkMsg).
func checkSend(ctx context.Context, nc *nats.Conn, m *nats.Msg) error {
	switch {
	case ctx == nil:
		return notSent(CodeInvalidArgument, "nil context; not sent", nats.ErrInvalidContext)
	case m == nil:
		return notSent(CodeInvalidArgument, "nil message; not sent", nats.ErrInvalidMsg)
	case nc == nil:
		return notSent(CodeInvalidArgument, "nil connection; not sent", nats.ErrInvalidConnection)
	}
	if err := ctx.Err(); err != nil {
		return notSent(ctxCode(err), "context done before sending; not sent", err)
	}
	return nil
}

// checkMsg checks what nats.go would refuse: the subject, the reply
// subject (when set) and the header keys.
func checkMsg(subject, reply string, h nats.Header) error {
	if err := checkSubjects(subject, reply); err != nil {
		return err
	}
	return checkHeaderKeys(h)
}

// checkSubjects checks the subject and the reply subject (when set).
func checkSubjects(subject, reply string) error {
	if !wire.ValidSubject(subject) {
		return notSent(CodeInvalidArgument, fmt.Sprintf("invalid subject %q; not sent", subject), nats.ErrBadSubject)
	}
	if reply != "" && !wire.ValidSubject(reply) {
		return notSent(CodeInvalidArgument, fmt.Sprintf("invalid reply subject %q; not sent", reply), nats.ErrBadSubject)
	}
	return checkControlLine(subject, len(reply))
}

// checkControlLine refuses a subject that, with a reply subject of
// replyLen bytes, could make the message's protocol line longer than the
// server reads (wire.MaxControlLine): the server would close the
// connection, failing everything else on it.
func checkControlLine(subject string, replyLen int) error {
	if wire.ControlLineFits(subject, replyLen) {
		return nil
	}
	return notSent(CodeInvalidArgument, fmt.Sprintf("subject of %d bytes too long (with %d bytes for the reply subject): the message's protocol line could exceed the server's max_control_line of %d bytes, which would close the connection; not sent",
		len(subject), replyLen, wire.MaxControlLine), nats.ErrBadSubject)
}

// checkHeaderKeys checks the header keys.
func checkHeaderKeys(h nats.Header) error {
	if k, bad := wire.InvalidHeaderKey(h); bad {
		return notSent(CodeInvalidArgument, fmt.Sprintf("invalid header key %q; not sent", k), nats.ErrBadHeaderMsg)
	}
	return nil
}

// claimError maps a claim check failure. The store says when nothing was
// published (claimcheck.ErrNotPublished); anything else may have been.
func claimError(ctx context.Context, m *nats.Msg, limit int64, err error) error {
	switch {
	case errors.Is(err, claimcheck.ErrTooLarge):
		return &Error{
			Code:    CodePayloadTooLarge,
			Message: "message does not fit even as a claim check; not sent",
			Size:    int64(MsgSize(m)), Limit: limit, outcome: OutcomeNotRun, err: err,
		}
	case errors.Is(err, claimcheck.ErrReservedHeader):
		return notSent(CodeInvalidArgument, "message already carries a claim check header; not sent", err)
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return sendError(ctx, err, !errors.Is(err, claimcheck.ErrNotPublished))
}

// storeKey is the key of the connection's claim check store holder in its
// connlimit.State.
type storeKey struct{}

// storeHolder is the lazily made claim check store of one connection,
// kept next to its limit state for Publish.
type storeHolder struct {
	mu    sync.Mutex
	store *claimcheck.Store
}

// claimStore returns the connection's claim check store, creating the
// default bucket on first use. A failure is not cached: the next publish
// tries again.
func claimStore(ctx context.Context, st *connlimit.State) (*claimcheck.Store, error) {
	h := st.Attach(storeKey{}, func() any { return &storeHolder{} }).(*storeHolder)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.store != nil {
		return h.store, nil
	}
	js, err := jetstream.New(st.Conn())
	if err != nil {
		return nil, err
	}
	s, err := claimcheck.New(ctx, js)
	if err != nil {
		return nil, err
	}
	h.store = s
	return s, nil
}
