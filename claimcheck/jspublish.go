package claimcheck

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/telemetry"
	"github.com/natssend/natssend/internal/wire"
	"github.com/natssend/natssend/outcome"
)

// errUnwritten marks a publish that was not made because its context was
// done before anything was written.
var errUnwritten = errors.New("claimcheck: not sent")

// PublishJetStream publishes m to a stream: unchanged when it fits,
// otherwise as a claim check. Fitting takes into account the headers the
// given options add (message ID, expectations, TTL, schedules), computed
// by nats.go itself, and the target stream's max_msg_size when it is
// below the connection's max_payload (looked up by subject and cached for
// a while). When the stream still refuses the message as too large
// (jetstream.ErrStreamMessageExceedsMaximum: nothing was stored), it is
// sent once more, as a claim check.
//
// The reference carries the same options, so de-duplication and
// expectations apply to it. When the reference is not stored (the server
// refused it, or there was no stream), the payload is deleted. When the
// outcome is unknown (a timeout or disconnect while waiting for the
// acknowledgement), the payload is kept (TTL removes it) so that a stored
// reference never points at nothing; retry with a message ID. When the
// acknowledgement reports a duplicate, the payload just stored is deleted
// (the stream keeps the earlier message). m is never modified.
//
// Errors match ErrNotPublished when nothing was stored: invalid input,
// ErrTooLarge, ErrClosed, a failed upload, and a publish that failed in a
// way that proves the stream did not store it (an API error such as a
// failed expectation, no responders, a refusal by nats.go). A timeout or
// disconnect while waiting for the acknowledgement does not match: the
// outcome is unknown.
func (s *Store) PublishJetStream(ctx context.Context, m *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	if t := s.tel(); t.Active() && ctx != nil && m != nil {
		ctx, op, tm := startProducer(ctx, t, m, telemetry.OperationJSPublish)
		ack, err := s.publishJetStream(ctx, tm, opts...)
		endProducer(ctx, &op, err)
		return ack, err
	}
	return s.publishJetStream(ctx, m, opts...)
}

func (s *Store) publishJetStream(ctx context.Context, m *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	if err := s.checkPublish(m); err != nil {
		return nil, notPublished(err)
	}
	if err := wire.CheckControlLine(m.Subject, wire.InboxReserve(s.nc.Opts.InboxPrefix)); err != nil {
		return nil, notPublished(err) // a JetStream publish is a request: nats.go adds a reply inbox
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, notPublished(err)
	}
	sent, err := s.jsHeaders(m, opts)
	if err != nil {
		return nil, notPublished(err)
	}
	var refuse error
	var ack *jetstream.PubAck
	v, limit, err := s.limit.Send(ctx, connlimit.Send{
		Decide: func(limit int64) (v connlimit.Verdict) {
			eff := limit
			if sl := s.streamMaxMsgSize(ctx, m.Subject); sl > 0 && sl < eff {
				eff = sl
			}
			v, refuse = s.decide(m, sent, 0, eff, limit)
			return v
		},
		Write: func() (err error) {
			ack, err = s.jsPublish(ctx, m, opts)
			return err
		},
		// Nothing was stored: our idea of the stream's limit was stale or
		// missing; the refusal bounds it (decided again, the message
		// becomes a claim check).
		Again: func(err error) bool {
			if errors.Is(err, jetstream.ErrStreamMessageExceedsMaximum) {
				s.streamRefused(m.Subject, int64(wire.MsgSize(sent, len(m.Data))))
				return true
			}
			return false
		},
	})
	switch {
	case err != nil && (notStored(err) || errors.Is(err, connlimit.ErrNotSent)):
		return nil, notPublished(err)
	case err != nil:
		return nil, err // outcome unknown
	case v == connlimit.Refuse:
		return nil, notPublished(refuse)
	case v == connlimit.Fits:
		return ack, nil
	}
	ref, name, err := s.reference(ctx, m, sent, limit)
	if err != nil {
		return nil, notPublished(err)
	}
	ack, err = s.publishJSRef(ctx, ref, opts)
	if err != nil {
		if notStored(err) || errors.Is(err, errUnwritten) || errors.Is(err, connlimit.ErrNotSent) {
			return nil, s.abandon(ctx, name, err)
		}
		return nil, fmt.Errorf("claimcheck: publishing the claim check %q: %w (it may have been stored; the payload is kept until the bucket's TTL)", name, err)
	}
	if ack.Duplicate {
		// The stream already holds this message ID; nothing refers to the
		// payload we just stored.
		cctx, cancel := s.cleanupContext(ctx)
		if derr := s.deleteObject(cctx, name); derr != nil {
			// The publish succeeded: the failed clean-up is reported, not
			// returned (the bucket's TTL removes the payload).
			s.tel().CleanupFailed(ctx, outcome.Describe(derr).Code, derr)
		}
		cancel()
	}
	return ack, nil
}

// publishJSRef publishes a JetStream claim check whose payload is stored.
// A reference that nats.go refuses for its size because the link changed
// during the upload (nothing was written) is sent once the new link's
// limit is known, if it fits that.
func (s *Store) publishJSRef(ctx context.Context, ref *nats.Msg, opts []jetstream.PublishOpt) (*jetstream.PubAck, error) {
	var ack *jetstream.PubAck
	v, limit, err := s.limit.Send(ctx, refSend(ref, func() (err error) {
		ack, err = s.jsPublish(ctx, ref, opts)
		return err
	}))
	if err == nil && v != connlimit.Fits {
		err = fmt.Errorf("%w: %w: the claim check's reference does not fit the new link's max_payload of %d bytes", errUnwritten, ErrTooLarge, limit)
	}
	return ack, err
}

// jsPublish is the JetStream publish of m (a copy: see copyForPublish)
// that ends at the server's report of a denied publish on m's subject:
// the server drops such a message and sends no acknowledgement, so
// without the report the publish would wait for its deadline. The error
// is then the denial (errors.Is nats.ErrPermissionViolation), which
// proves nothing was stored (notStored).
func (s *Store) jsPublish(ctx context.Context, m *nats.Msg, opts []jetstream.PublishOpt) (*jetstream.PubAck, error) {
	wctx, stop := s.limit.WatchDenied(ctx, []string{m.Subject}, nil)
	defer stop()
	ack, err := s.js.PublishMsg(wctx, copyForPublish(m, opts), opts...)
	if d := connlimit.DeniedCause(wctx); d != nil && err != nil {
		return nil, fmt.Errorf("claimcheck: %w", d)
	}
	return ack, err
}

// copyForPublish returns a message jetstream.PublishMsg may modify (it
// sets headers on it when options are given).
func copyForPublish(m *nats.Msg, opts []jetstream.PublishOpt) *nats.Msg {
	if len(opts) == 0 {
		return m // not modified without options
	}
	return &nats.Msg{Subject: m.Subject, Reply: m.Reply, Header: cloneHeader(m.Header), Data: m.Data}
}

// notStored reports whether a JetStream publish error proves that the
// message was not stored: the server answered with an error, nothing
// answered at all, or nats.go refused to send it.
func notStored(err error) bool {
	var apiErr *jetstream.APIError
	var denied *connlimit.Denial
	return errors.As(err, &apiErr) ||
		errors.As(err, &denied) && denied.Op != "subscribe" ||
		errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, nats.ErrMaxPayload) ||
		errors.Is(err, nats.ErrBadHeaderMsg) ||
		errors.Is(err, nats.ErrBadSubject) ||
		errors.Is(err, nats.ErrReconnectBufExceeded) ||
		errors.Is(err, jetstream.ErrInvalidOption)
}

// jsHeaders returns the header block a JetStream publish of m with opts
// sends: m's headers with what the options add, computed by nats.go
// itself. It runs jetstream's own PublishMsg on a copy with an empty
// subject and an already cancelled context: nats.go applies the options'
// headers and then stops at the context check before anything is written
// to the connection (and an empty subject could not be sent anyway). An
// option error (for example a stall wait on a synchronous publish) is
// returned as the real publish would return it. TestJetStreamHeadersExact
// proves, against a real stream, that the result equals the stored
// headers for every option and that the dry run sends nothing.
func (s *Store) jsHeaders(m *nats.Msg, opts []jetstream.PublishOpt) (nats.Header, error) {
	if len(opts) == 0 {
		return m.Header, nil
	}
	probe := &nats.Msg{Header: cloneHeader(m.Header)}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.pub.PublishMsg(ctx, probe, opts...)
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, nats.ErrBadSubject):
		return probe.Header, nil
	case err == nil:
		return nil, errors.New("claimcheck: internal error: the header dry run was acknowledged")
	default:
		return nil, err
	}
}
