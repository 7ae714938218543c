package shim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/callerr"
	"github.com/natssend/natssend/outcome"
)

// WithClaimChecks lets the Client carry requests and replies above the
// connection's limit through st (RPC overflow):
//
//   - A request whose whole message (body, its headers, the client's
//     static headers and the timeout header) does not fit the limit (the
//     lower of max_payload and WithPayloadCap) is stored in st and sent as
//     a claim-check reference, once. An upload that fails, or leaves no
//     time, is OutcomeNotRun with nothing sent (whatever was stored is
//     purged).
//   - Every request (but RequestMany's) carries HeaderAcceptClaimCheck
//     with st's bucket, so a responder with ServeClaimChecks on the same
//     bucket may answer with a claim check; the reply is read from st
//     within the call's deadline and returned with its body resolved and
//     the claim-check headers removed, exactly as if it had fit. A reply that cannot be read is
//     OutcomeUnknown with CodeReplyLost (ErrReplyLost): the operation ran.
//   - The caller owns both payloads: the request payload is deleted when
//     the call ends (reply, error or deadline), the reply payload after it
//     was read (or failed to be). A deletion that fails is left to the
//     bucket's TTL; use a bucket with a short TTL (claimcheck.WithTTL, a
//     few times the longest call) for RPC overflow. On a connection made
//     by Connect, st asks the server once, before the first call, whether
//     its user may delete (purge the bucket's subjects): a refusal fails
//     every call with PERMISSION_DENIED (not run), so that payloads are
//     never left behind calls that succeed.
//
// The deadline of the call covers the upload, the call, the responder's
// resolve and reply upload, and the download. A request that fits is sent
// exactly as without WithClaimChecks (plus the accept header). st must not
// be nil; its bucket name counts against the limit in every request.
func WithClaimChecks(st *claimcheck.Store) Option {
	return func(c *Client) error {
		if st == nil {
			return invalidOption("WithClaimChecks(nil): a nil store")
		}
		c.store = st // NewClient adds HeaderAcceptClaimCheck
		return nil
	}
}

// ServeClaimChecks makes a Handler (and JSONHandler) take part in RPC
// overflow with st:
//
//   - A claim-checked request is resolved from st before fn runs, within
//     the caller's deadline, and fn sees it exactly as if it had fit (body
//     resolved, claim-check headers removed). Subject binding applies (see
//     claimcheck.WithSubjectBinding): a reference to an object stored for
//     another subject is refused. When the request cannot be resolved, fn
//     does not run and the caller gets a rejection
//     (CodeClaimCheckUnresolved, OutcomeRejected). The responder never
//     deletes a request's payload: the caller owns it (several responders
//     may read one request).
//   - A reply over the responder's limit, or over the caller's (the
//     max-payload of HeaderAcceptClaimCheck), goes as a claim check stored
//     in st when the request accepts them from st (HeaderAcceptClaimCheck
//     naming st's JetStream domain); otherwise it is answered with
//     PAYLOAD_TOO_LARGE as without this option. The caller deletes the
//     reply payload after reading it.
//
// Without ServeClaimChecks a Handler answers a claim-checked request with
// the same rejection and does not run fn (it would see an empty body).
// Use Conn too so that the reply decision uses the responder connection's
// limit; without it the Store's connection's limit is used. st must not be
// nil.
func ServeClaimChecks(st *claimcheck.Store) HandlerOption {
	return func(o *handlerOpts) error {
		if st == nil {
			return invalidOption("ServeClaimChecks(nil): a nil store")
		}
		o.store = st
		return nil
	}
}

// timeoutMS is the HeaderTimeout value for d: whole milliseconds rounded
// up (without overflowing near math.MaxInt64), at least 1.
func timeoutMS(d time.Duration) int64 {
	ms := d / time.Millisecond
	if d%time.Millisecond > 0 {
		ms++
	}
	return max(int64(ms), 1)
}

// uploadError maps a failure of the request upload: nothing was sent.
func uploadError(ctx context.Context, m *nats.Msg, limit int64, err error) error {
	switch {
	case errors.Is(err, claimcheck.ErrTooLarge):
		e := notSent(CodePayloadTooLarge, fmt.Sprintf("request of %d bytes does not fit the %d-byte limit even as a claim check: %v; not sent", MsgSize(m), limit, err),
			fmt.Errorf("%w; %w", nats.ErrMaxPayload, err))
		e.Size, e.Limit = int64(MsgSize(m)), limit
		return e
	case errors.Is(err, claimcheck.ErrReservedHeader):
		return notSent(CodeInvalidArgument, "request already carries a claim-check header; not sent", err)
	}
	mapped := callerr.SendError(ctx, err, false)
	code, msg := CodeUnavailable, "the claim check store or its connection failed; not sent"
	var e *Error
	if errors.As(mapped, &e) && e.Code != CodeInternal {
		code, msg = e.Code, e.Message
	}
	if errors.Is(err, claimcheck.ErrClosed) {
		code, msg = CodeInvalidArgument, "the claim check store is closed; not sent"
	}
	// Nothing of the request was sent: whatever failed during the upload
	// (a dropped connection, a stream without a leader), the responder saw
	// nothing. UNAVAILABLE is what Attempts and Retry send again.
	return notSent(code, "storing the request as a claim check failed: "+msg, err)
}

// resolveReply returns reply with a claim-checked body resolved, and
// deletes the reply payload. A reply that cannot be read is CodeReplyLost.
func (c *Client) resolveReply(ctx, callCtx context.Context, reply *nats.Msg) (*nats.Msg, error) {
	if !claimcheck.IsClaimCheck(reply) {
		return reply, nil
	}
	if c.store == nil {
		// This Client did not ask for a claim-checked reply and cannot
		// read one: the responder ran, the reply is out of reach. Never
		// hand the reference back as if it were the reply.
		return nil, mayHaveRun(CodeReplyLost, fmt.Sprintf("the operation completed but the responder answered with a claim-checked reply (%s bytes) that this Client cannot read (it has no WithClaimChecks store)", reply.Header.Get(claimcheck.HeaderSize)), ErrReplyLost)
	}
	data, err := c.store.Resolve(callCtx, reply)
	c.discard(ctx, reply) // the caller owns the reply payload; a failure is reported, TTL is the backstop
	if err != nil {
		return nil, mayHaveRun(CodeReplyLost, fmt.Sprintf("the operation completed but its claim-checked reply (%s bytes) could not be read: %v", reply.Header.Get(claimcheck.HeaderSize), err), fmt.Errorf("%w; %w", ErrReplyLost, err))
	}
	return resolved(reply, data), nil
}

// resolved returns a copy of the claim check m with body data and without
// the claim-check headers (no header map at all when none is left).
func resolved(m *nats.Msg, data []byte) *nats.Msg {
	var h nats.Header
	for k, v := range m.Header {
		switch k {
		case claimcheck.HeaderRef, claimcheck.HeaderSize, claimcheck.HeaderBucket, claimcheck.HeaderDomain:
		default:
			if h == nil {
				h = nats.Header{}
			}
			h[k] = v
		}
	}
	return &nats.Msg{Subject: m.Subject, Reply: m.Reply, Header: h, Data: data, Sub: m.Sub}
}

// resolveRequest resolves a claim-checked request before the handler runs.
// ok is false when the request was answered with a rejection (or, without
// a reply subject, reported) and the handler must not run.
func (o *handlerOpts) resolveRequest(ctx context.Context, req *nats.Msg, report func(*nats.Msg, error)) (*nats.Msg, bool) {
	if !claimcheck.IsClaimCheck(req) {
		return req, true
	}
	var err error
	var data []byte
	if o.store == nil {
		err = fmt.Errorf("this responder does not serve claim-checked requests (ServeClaimChecks)")
	} else {
		data, err = o.store.Resolve(ctx, req)
		if b := req.Header.Get(HeaderAcceptClaimCheck); err != nil && b != "" && b != o.store.Bucket() && req.Header.Get(claimcheck.HeaderBucket) == "" {
			// An older caller's reference names no bucket, but its accept
			// header does: say what is wrong, not just that the payload
			// is missing.
			err = fmt.Errorf("the request was stored in bucket %q, this responder's store reads %q (ServeClaimChecks needs a Store on the caller's bucket): %w", b, o.store.Bucket(), err)
		}
	}
	if err == nil {
		return resolved(req, data), true
	}
	if crossesAccount(req.Reply) {
		err = fmt.Errorf("the request came through a service import from another account, and its claim check is stored in that account's JetStream, which this responder's Store cannot read (see docs/permissions.md, \"Accounts\"): %w", err)
	}
	rerr := outcome.New(CodeClaimCheckUnresolved, "the claim-checked request could not be resolved; the handler did not run: "+err.Error(), OutcomeRejected, err)
	report(req, rerr)
	if req.Reply != "" {
		report(req, respondError(ctx, o.st, req, CodeClaimCheckUnresolved, rerr.Message, true))
	}
	return nil, false
}

// crossesAccount reports whether reply is the reply subject of a request
// that came through a service import from another account: the server
// gives such a request a reply subject under _R_. in the exporting
// account. The caller's account cannot read this account's JetStream, and
// what the caller publishes to this account's inboxes does not arrive:
// no claim-checked reply and no stream can cross.
func crossesAccount(reply string) bool { return strings.HasPrefix(reply, "_R_.") }

// respondData sends fn's reply body: as a claim check stored in the
// handler's store when it does not fit and the request accepts claim
// checks, otherwise with respond.
func (o *handlerOpts) respondData(ctx context.Context, req *nats.Msg, data []byte) error {
	return replyClaimCheck(ctx, o.store, callerAccept(req.Header), req.Reply, data, nil, replyPeer{
		ls:    o.st,
		plain: func() error { return respond(ctx, o.st, req, data, nil) },
		errorReply: func(code, msg string) error {
			return respondError(ctx, o.st, req, code, msg, false)
		},
		sendRef: func(ref *nats.Msg) error {
			_, err := sendReply(ctx, o.st, int64(MsgSize(ref)), func() error { return replyWith(ctx, req, ref) })
			return err
		},
	})
}
