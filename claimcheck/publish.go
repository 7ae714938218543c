package claimcheck

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/telemetry"
	"github.com/natssend/natssend/internal/wire"
)

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
	ref, err := s.prepare(ctx, m, reserve, 0, "")
	if err != nil {
		return nil, notPublished(err)
	}
	return ref, nil
}

// prepare is Prepare, and shim's capped claim check (internal/claimops)
// when capLimit is positive: the decision is made against the lower of
// the connection's limit and capLimit, and the chunks are sized to it
// too: a reply's capLimit is its caller's max-payload, and the caller
// reads the chunks (across a leafnode to a site with a lower limit, one
// direct-get reply over it closes the whole link).
func (s *Store) prepare(ctx context.Context, m *nats.Msg, reserve int, capLimit int64, replyKey string) (*nats.Msg, error) {
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
	// A reply with its caller's key is stored under the name both derive
	// (once per reply subject: errReplyStored); anything else under a
	// random name.
	ref, _, err := s.referenceNamed(ctx, m, m.Header, eff, replyName(replyKey, m.Subject))
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
	if t := s.tel(); t.Active() && ctx != nil && m != nil {
		ctx, op, tm := startProducer(ctx, t, m, telemetry.OperationPublish)
		err := notPublished(s.publishMsg(ctx, tm))
		endProducer(ctx, &op, err)
		return err
	}
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
	var refuse error
	v, limit, err := s.limit.Send(ctx, connlimit.Send{
		Decide: func(limit int64) (v connlimit.Verdict) {
			v, refuse = s.decide(m, m.Header, 0, limit, limit)
			return v
		},
		Write: func() error { return s.nc.PublishMsg(m) },
	})
	switch {
	case err != nil:
		return err
	case v == connlimit.Refuse:
		return refuse
	case v == connlimit.Fits:
		return nil
	}
	ref, name, err := s.reference(ctx, m, m.Header, limit)
	if err != nil {
		return err
	}
	return s.publishRef(ctx, ref, name)
}

// publishRef publishes a reference whose payload is stored, deleting the
// payload when the reference cannot be published. A reference that
// nats.go refuses for its size because the link changed during the
// upload is sent once the new link's limit is known, if it fits that.
func (s *Store) publishRef(ctx context.Context, ref *nats.Msg, name string) error {
	prev := s.nc.LastError()
	v, limit, err := s.limit.Send(ctx, refSend(ref, func() error { return s.nc.PublishMsg(ref) }))
	if err == nil && v != connlimit.Fits {
		err = fmt.Errorf("%w: the claim check's reference (%d bytes) does not fit the new link's max_payload of %d bytes", ErrTooLarge, wire.MsgSize(ref.Header, 0), limit)
	}
	if err == nil {
		// The payload is stored: a reference the server drops (the user
		// may not publish to its subject) would leave it for nobody until
		// the bucket's TTL. One round trip, on a connection made by
		// shim.Connect, tells; a refused reference's payload is deleted.
		if d := s.limit.Verdict(connlimit.DefaultFlushTimeout, prev, func(d *connlimit.Denial) bool {
			return d.Op != "subscribe" && (d.Subject == ref.Subject || d.Subject == ref.Reply)
		}); d != nil {
			err = fmt.Errorf("claimcheck: publishing the reference: %w", d)
		}
	}
	if err != nil {
		return s.abandon(ctx, name, err)
	}
	return nil
}

// refSend is the send of a reference whose payload is stored: it fits, or
// (the link changed during the upload and its limit fell) it is refused.
func refSend(ref *nats.Msg, write func() error) connlimit.Send {
	return connlimit.Send{
		Decide: func(limit int64) connlimit.Verdict {
			return connlimit.Decide(int64(wire.MsgSize(ref.Header, 0)), limit, connlimit.NoClaimCheck)
		},
		Write: write,
	}
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
	bucket, domain, err := s.location(ref.Subject, name, ref.Header)
	if err != nil {
		return err
	}
	cctx, cancel := s.cleanupContext(ctx)
	defer cancel()
	return s.discardObject(cctx, at{bucket: bucket, domain: domain}, name, ref.Subject)
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
	return s.referenceNamed(ctx, m, sent, connLimit, "")
}

// referenceNamed is reference storing the object as name ("" for a new
// random name).
func (s *Store) referenceNamed(ctx context.Context, m *nats.Msg, sent nats.Header, connLimit int64, name string) (*nats.Msg, string, error) {
	sctx, op := s.startChild(ctx, telemetry.OperationStore, m.Subject, len(m.Data))
	name, err := s.store(sctx, m.Subject, m.Data, connLimit, name)
	s.stored(ctx, &op, m.Subject, len(m.Data), err)
	if err != nil {
		return nil, "", err
	}
	if err := ctx.Err(); err != nil {
		cctx, cancel := s.cleanupContext(ctx)
		if derr := s.deleteObject(cctx, name); derr != nil {
			err = fmt.Errorf("%w (and the stored payload %q could not be deleted: %w)", err, name, derr)
		}
		cancel()
		return nil, "", &storeError{len(m.Data), err}
	}
	ref := &nats.Msg{Subject: m.Subject, Reply: m.Reply, Header: cloneHeader(m.Header)}
	if ref.Header == nil {
		ref.Header = nats.Header{}
	}
	s.setRef(ref.Header, name, len(m.Data))
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
