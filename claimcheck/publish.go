package claimcheck

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/internal/connlimit"
)

// maxDecisions bounds how often one send decides again after nats.go
// refused it with nats.ErrMaxPayload (the connection's limit fell between
// the decision and the send, by a reconnect; nothing was written). Each
// new decision waits for the new link's limit, so more than two are rare.
const maxDecisions = 8

// Prepare returns m itself when it fits the connection's effective
// max_payload with reserve more header bytes, which the caller will still
// add (when m has no header at all, count wire.EmptyBlockSize in reserve
// too). Otherwise it stores m's body and returns a new reference message:
// m's subject and reply, a copy of m's headers plus HeaderRef and
// HeaderSize, and an empty body. m and its Header map are never modified.
//
// The order rule for callers that send the result themselves: Prepare has
// stored the payload completely before it returns the reference. If
// sending the reference fails so that nothing was sent, call Discard with
// it, which deletes the stored payload. Once a reference may have reached
// anyone, do not Discard it: receivers may still be reading, and the
// bucket's TTL removes the payload.
//
// Errors: ErrTooLarge (nothing stored) for a body above the maximum
// object size or headers that alone do not fit; ErrReservedHeader for a
// message with a body that already carries a claim-check header;
// ErrClosed after Close; nats.ErrBadSubject or nats.ErrBadHeaderMsg for
// a subject, reply subject or header key nats.go would refuse, and
// ErrInvalidOption for a negative reserve, all before anything is stored;
// a store error when storing fails (whatever was written is purged).
// Prepare publishes nothing, so every error it returns matches
// ErrNotPublished.
func (s *Store) Prepare(ctx context.Context, m *nats.Msg, reserve int) (*nats.Msg, error) {
	ref, err := s.prepare(ctx, m, reserve, 0)
	if err != nil {
		return nil, notPublished(err)
	}
	return ref, nil
}

// prepare is Prepare, and PrepareLimit when capLimit is positive: the
// decision is made against the lower of the connection's limit and
// capLimit, while chunks are sized to the connection's limit.
func (s *Store) prepare(ctx context.Context, m *nats.Msg, reserve int, capLimit int64) (*nats.Msg, error) {
	if err := s.checkPublish(m); err != nil {
		return nil, err
	}
	if reserve < 0 {
		return nil, fmt.Errorf("%w: claimcheck: negative reserve %d", ErrInvalidOption, reserve)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	limit, err := s.limit.Limit(ctx)
	if err != nil {
		return nil, err
	}
	eff := limit
	if capLimit > 0 {
		eff = min(limit, capLimit)
	}
	v, err := s.decide(m, m.Header, int64(reserve), eff, limit)
	switch v {
	case connlimit.Fits:
		return m, nil
	case connlimit.Refuse:
		return nil, err
	}
	ref, _, err := s.reference(ctx, m, m.Header, limit)
	return ref, err
}

// PublishMsg publishes m with Core NATS: unchanged when it fits the
// connection's effective max_payload, otherwise as a claim check (the
// payload is stored completely first; when the reference cannot be
// published the payload is deleted and the error returned). m is never
// modified. Like nats.Conn.PublishMsg it does not wait for the server.
//
// Every error matches ErrNotPublished: nats.Conn.PublishMsg either hands
// the whole message to the connection or fails without any of it
// reaching the server (a write that fails part way closes the
// connection, and the message's end was never sent).
func (s *Store) PublishMsg(ctx context.Context, m *nats.Msg) error {
	return notPublished(s.publishMsg(ctx, m))
}

func (s *Store) publishMsg(ctx context.Context, m *nats.Msg) error {
	if err := s.checkPublish(m); err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		limit, err := s.limit.Limit(ctx)
		if err != nil {
			return err
		}
		v, err := s.decide(m, m.Header, 0, limit, limit)
		switch v {
		case connlimit.Refuse:
			return err
		case connlimit.Fits:
			s.limit.BeforeSend()
			err := s.nc.PublishMsg(m)
			if errors.Is(err, nats.ErrMaxPayload) && attempt < maxDecisions {
				// The link changed between the decision and the send
				// (nats.go holds 0 until a new link's limit arrives);
				// nothing was written. Decide again on the new limit.
				s.limit.Redecided()
				continue
			}
			return err
		}
		ref, name, err := s.reference(ctx, m, m.Header, limit)
		if err != nil {
			return err
		}
		return s.publishRef(ctx, ref, name)
	}
}

// publishRef publishes a reference whose payload is stored, deleting the
// payload when the reference cannot be published. A reference that
// nats.go refuses for its size because the link changed during the
// upload is sent once the new link's limit is known, if it fits that.
func (s *Store) publishRef(ctx context.Context, ref *nats.Msg, name string) error {
	for attempt := 1; ; attempt++ {
		err := s.nc.PublishMsg(ref)
		if err == nil {
			return nil
		}
		if errors.Is(err, nats.ErrMaxPayload) && attempt < maxDecisions {
			s.limit.Redecided()
			if limit, lerr := s.limit.Limit(ctx); lerr == nil && fits(ref.Header, 0, 0, limit) {
				continue
			}
		}
		return s.abandon(ctx, name, err)
	}
}

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
	if err := s.checkPublish(m); err != nil {
		return nil, notPublished(err)
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
	var limit, eff int64
	for attempt := 1; ; attempt++ {
		if limit, err = s.limit.Limit(ctx); err != nil {
			return nil, notPublished(err)
		}
		eff = limit
		if sl := s.streamMaxMsgSize(ctx, m.Subject); sl > 0 && sl < eff {
			eff = sl
		}
		v, err := s.decide(m, sent, 0, eff, limit)
		if v == connlimit.Refuse {
			return nil, notPublished(err)
		}
		if v == connlimit.ClaimCheck {
			break
		}
		// The loop sends again only after an error proving that nothing
		// was stored (the stream's size refusal, nats.go's ErrMaxPayload).
		ack, err := s.js.PublishMsg(ctx, copyForPublish(m, opts), opts...) //natssend:reviewed retry: sent again only after a refusal that stored nothing
		switch {
		case err == nil:
			return ack, nil
		case errors.Is(err, jetstream.ErrStreamMessageExceedsMaximum) && attempt < maxDecisions:
			// Nothing was stored. Our idea of the stream's limit was stale.
			s.forgetStream(m.Subject)
			continue
		case errors.Is(err, nats.ErrMaxPayload) && attempt < maxDecisions:
			// nats.go sent nothing: the link changed. Decide again.
			s.limit.Redecided()
			continue
		case notStored(err):
			return nil, notPublished(err)
		default:
			return nil, err // outcome unknown
		}
	}
	ref, name, err := s.reference(ctx, m, sent, limit)
	if err != nil {
		return nil, notPublished(err)
	}
	ack, err := s.js.PublishMsg(ctx, ref, opts...)
	if err != nil {
		if notStored(err) {
			return nil, s.abandon(ctx, name, err)
		}
		return nil, fmt.Errorf("claimcheck: publishing the claim check %q: %w (it may have been stored; the payload is kept until the bucket's TTL)", name, err)
	}
	if ack.Duplicate {
		// The stream already holds this message ID; nothing refers to the
		// payload we just stored.
		cctx, cancel := s.cleanupContext(ctx)
		_ = s.deleteObject(cctx, name)
		cancel()
	}
	return ack, nil
}

// Discard deletes the payload a reference from Prepare points to. Call it
// when sending the reference failed so that nobody can have received it,
// or when the reference's owner knows every reader is done with it (RPC
// overflow: a caller deletes its request's payload when the call ends and
// the reply's payload after reading it; package shim does). It does nothing for a message that is not a claim check (Prepare
// returned the message itself), or whose payload is already gone. It
// refuses (ErrSubjectMismatch) a reference whose subject differs from the
// one the payload was stored for. Discard runs on a fresh context bounded
// by the cleanup timeout (ctx provides values only), so that it works
// right after the caller's context ended.
func (s *Store) Discard(ctx context.Context, ref *nats.Msg) error {
	if ref == nil || ref.Header == nil {
		return nil
	}
	vals, ok := ref.Header[HeaderRef]
	if !ok {
		return nil
	}
	if len(vals) != 1 || !validName(vals[0]) {
		return &ResolveError{Subject: ref.Subject, Err: ErrCorrupt, Detail: fmt.Sprintf("malformed %s header %q", HeaderRef, vals)}
	}
	name := vals[0]
	cctx, cancel := s.cleanupContext(ctx)
	defer cancel()
	info, err := s.obs.GetInfo(cctx, name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("claimcheck: discarding object %q: %w", name, err)
	}
	if got := info.Metadata[MetaSubject]; got != ref.Subject {
		return &ResolveError{Object: name, Subject: ref.Subject, Err: ErrSubjectMismatch, Detail: fmt.Sprintf("stored for %q", got)}
	}
	if err := s.deleteObject(cctx, name); err != nil {
		return fmt.Errorf("claimcheck: discarding object %q: %w", name, err)
	}
	return nil
}

// abandon deletes a stored payload whose reference was not published and
// returns the publish error, saying so. The error matches ErrNotPublished.
func (s *Store) abandon(ctx context.Context, name string, perr error) error {
	cctx, cancel := s.cleanupContext(ctx)
	defer cancel()
	if err := s.deleteObject(cctx, name); err != nil {
		return notPublished(fmt.Errorf("claimcheck: publishing the claim check failed, nothing was published: %w (deleting the stored payload %q also failed: %v; the bucket's TTL removes it)", perr, name, err))
	}
	return notPublished(fmt.Errorf("claimcheck: publishing the claim check failed, nothing was published and the stored payload was deleted: %w", perr))
}

// reference stores m's body and returns the reference message and the
// object name; decide has said ClaimCheck. connLimit is the connection's
// max_payload, which sizes the chunks.
func (s *Store) reference(ctx context.Context, m *nats.Msg, sent nats.Header, connLimit int64) (*nats.Msg, string, error) {
	sizeStr := strconv.Itoa(len(m.Data))
	name, err := s.store(ctx, m.Subject, m.Data, connLimit)
	if err != nil {
		return nil, "", err
	}
	if err := ctx.Err(); err != nil {
		cctx, cancel := s.cleanupContext(ctx)
		_ = s.deleteObject(cctx, name)
		cancel()
		return nil, "", &storeError{len(m.Data), err}
	}
	ref := &nats.Msg{Subject: m.Subject, Reply: m.Reply, Header: cloneHeader(m.Header)}
	if ref.Header == nil {
		ref.Header = nats.Header{}
	}
	ref.Header.Set(HeaderRef, name)
	ref.Header.Set(HeaderSize, sizeStr)
	return ref, name, nil
}

func cloneHeader(h nats.Header) nats.Header {
	if h == nil {
		return nil
	}
	c := make(nats.Header, len(h))
	for k, v := range h {
		c[k] = append([]string(nil), v...)
	}
	return c
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
	return errors.As(err, &apiErr) ||
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
