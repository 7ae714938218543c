package shim

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/callerr"
	"github.com/natssend/natssend/internal/claimops"
	"github.com/natssend/natssend/internal/connlimit"
)

// replyPeer is how one kind of responder (a Handler, a micro endpoint)
// sends the three replies a claim-checked reply can turn into.
type replyPeer struct {
	ls         *connlimit.State                 // the responder connection's limit state; nil when unknown
	plain      func() error                     // the reply as without claim checks (PAYLOAD_TOO_LARGE over its limit or the caller's)
	errorReply func(code, message string) error // an error reply
	sendRef    func(ref *nats.Msg) error        // the claim check's reference
}

// replyClaimCheck is the one reply claim check of Handler, JSONHandler
// and RespondMicroClaimCheck: the reply data (headers h) to a request
// whose reply subject is replySubj and whose caller says caller (see
// callerAccept) goes through store when it does not fit. store may be
// nil (a responder without claim checks): the reply is then decided
// against the caller's max-payload too.
//
// The fallback rule: the reply goes as without claim checks (plain) when
// the request does not accept claim checks from store's bucket, when it
// fits the responder's limit, and when the store refuses it for what it
// is, before storing anything (claimcheck.ErrTooLarge: above the maximum
// object size, or headers that alone do not fit; nats.ErrBadHeaderMsg or
// claimcheck.ErrReservedHeader: headers a claim check cannot carry); the
// plain reply then answers PAYLOAD_TOO_LARGE if it does not fit. A failed
// upload (or a deadline that passed: nothing is stored for a caller that
// gave up) answers INTERNAL. A reference that cannot be sent is deleted.
// When another responder's reply to the same request is already stored
// (claimops.Ops.ReplyStored: a subject served by several plain
// subscriptions), nothing is sent: that reply answers the call.
// With the caller's reply key the payload is stored under
// claimops.ReplyObjectName(key, replySubj), so that the caller can delete
// it even if the reference never reaches it; without one (an older
// caller) under a random name.
func replyClaimCheck(ctx context.Context, store *claimcheck.Store, caller acceptance, replySubj string, data []byte, h nats.Header, p replyPeer) error {
	if store == nil || replySubj == "" || !caller.canRead(store) || checkReplySubject(replySubj) != nil || crossesAccount(replySubj) {
		// Across an account import the caller could not read the payload:
		// a reply that does not fit is PAYLOAD_TOO_LARGE, never REPLY_LOST.
		return p.plain()
	}
	var limit int64 // 0: the store's connection's limit
	if p.ls != nil {
		l, err := p.ls.Limit(ctx)
		if errors.Is(err, nats.ErrConnectionReconnecting) && waitConnected(ctx, p.ls.Conn(), replyReconnectWait) == nil {
			// The reply is ready but the link is down: as a plain reply
			// does (sendReply), wait for the reconnect, then decide on the
			// new link's limit.
			l, err = p.ls.Limit(ctx)
		}
		if err != nil {
			return callerr.SendError(ctx, err, false)
		}
		limit = l
	}
	// The reply must fit the caller's connection too (a leafnode to a
	// site with a lower limit closes the whole link for one message over
	// it): decide against the smaller limit, and size the payload's chunks
	// to it (the caller reads them).
	limit = caller.capTo(limit)
	rm := &nats.Msg{Subject: replySubj, Header: h, Data: data}
	if limit > 0 && connlimit.Decide(int64(MsgSize(rm)), limit, connlimit.NoClaimCheck) == connlimit.Fits {
		return p.plain()
	}
	cc := claimops.For(store)
	ref, err := cc.Prepare(ctx, rm, 0, limit, caller.replyKey)
	switch {
	case cc.ReplyStored(err):
		return nil // another responder's reply to this request is stored: it answers the call
	case errors.Is(err, claimcheck.ErrTooLarge), errors.Is(err, nats.ErrBadHeaderMsg), errors.Is(err, claimcheck.ErrReservedHeader):
		return p.plain()
	case err != nil:
		msg := fmt.Sprintf("reply of %d bytes could not be stored as a claim check (%v) and was not sent; the operation may already have completed", len(data), err)
		cause := err
		if serr := p.errorReply(CodeInternal, msg); serr != nil {
			cause = fmt.Errorf("%w; error reply not sent either: %w", err, serr)
		}
		e := notSent(CodeInternal, msg, cause)
		e.Size = int64(len(data))
		return e
	case ref == rm:
		return p.plain() // it fits the limit after all
	}
	if err := p.sendRef(ref); err != nil {
		serr := callerr.SendError(ctx, err, false)
		if derr := store.Discard(ctx, ref); derr != nil { // nothing was sent: nobody can read it
			return fmt.Errorf("%w; the stored reply could not be deleted either: %w", serr, derr)
		}
		return serr
	}
	return nil
}
