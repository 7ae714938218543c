package shim

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/callerr"
	"github.com/natssend/natssend/internal/claimops"
	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/wire"
)

// AttemptTimeout sets how long one attempt of a call with Attempts and
// OperationID waits for a reply before the request is sent again
// (DefaultAttemptTimeout unless set). It does not end the attempt: the
// call keeps listening for the replies of every attempt, and whichever
// comes first answers it, so a responder slower than d still completes
// the call (it just sees the request again, with the same operation ID).
// Set it above the time your handler usually takes, so that a healthy
// responder is not sent duplicates. The last attempt waits for all the
// time left. It must be positive; it has no effect without Attempts and
// OperationID.
func AttemptTimeout(d time.Duration) AttemptOption {
	return attemptOpt(func(o *callOpts) error {
		if d <= 0 {
			return invalidOption("AttemptTimeout(%v): the timeout must be positive", d)
		}
		o.attemptWait = d
		return nil
	})
}

// call is a request sent through the connection's reply inbox (replyMux):
// every call of a Client with WithClaimChecks and every call with
// Attempts. It sends m up to co.attempts times within callCtx (see
// Attempts for which failures are sent again), stores a claim-checked
// request once and deletes it once at the end, and takes a reply to any
// of its attempts.
func (c *Client) call(ctx, callCtx context.Context, deadline time.Time, m *nats.Msg, co callOpts) (*nats.Msg, error) {
	if c.store != nil {
		// RPC overflow deletes both payloads of the call: a user who may
		// not would leave them for the bucket's TTL behind a call that
		// succeeds. The Store asks the server once.
		if err := claimops.For(c.store).CanDelete(callCtx); err != nil {
			return nil, notSent(CodePermissionDenied, err.Error()+"; not sent", err)
		}
	}
	mux, err := muxFor(c.st)
	if err != nil {
		return nil, callerr.SendError(ctx, err, false)
	}
	token, mc := mux.register(c.store)
	var key string
	if c.store != nil {
		key = newReplyKey()
		mc.key = key // before any reply can come: nothing is sent yet
	}
	tried := 0
	defer func() { mux.end(token, mc, deadline, tried) }()

	cs := callState{c: c, ctx: ctx, callCtx: callCtx, deadline: deadline, m: m, co: co, key: key}
	defer cs.discard()
	return runAttempts(callCtx, newSchedule(co, deadline), func(attempt int, wait func() time.Duration) (*nats.Msg, bool, error) {
		tried = attempt
		if err := cs.sendAttempt(mux.subject(token, attempt)); err != nil {
			attemptEvent(co.tele, attempt, err) // not sent
			return nil, false, err
		}
		if co.attempts > 1 { // a single attempt has no earlier one to wait for
			if cs.pending == nil {
				cs.pending = map[int]struct{}{}
			}
			cs.pending[attempt] = struct{}{}
		}
		reply, err := cs.await(mux, mc, attempt, wait())
		attemptEvent(co.tele, attempt, err)
		if err != nil {
			return nil, false, err
		}
		// A lost claim-checked reply (REPLY_LOST: the responder ran, its
		// reply cannot be read) is an unknown outcome, sent again under an
		// OperationID while attempts are left: the request's payload stays
		// for that until the call ends.
		again := co.opID != "" && attempt < max(co.attempts, 1)
		if !again {
			cs.discardAsync() // the responder read the request
		}
		reply, err = c.resolveReply(ctx, callCtx, reply)
		if again && errors.Is(err, ErrReplyLost) {
			return nil, false, err // the schedule sends it again
		}
		return reply, true, err
	})
}

// errAttemptWait marks an attempt whose wait for a reply ended before the
// call's deadline (AttemptTimeout).
var errAttemptWait = errors.New("natssend: no reply within the attempt's wait")

// errAttemptTimedOut is the underlying error of such an attempt: like every
// DEADLINE_EXCEEDED error it matches nats.ErrTimeout and
// context.DeadlineExceeded.
var errAttemptTimedOut = fmt.Errorf("%w; %w; %w", errAttemptWait, nats.ErrTimeout, context.DeadlineExceeded)

// callState is what the attempts of one call share.
type callState struct {
	c                *Client
	ctx, callCtx     context.Context
	deadline         time.Time
	m                *nats.Msg
	co               callOpts
	key              string           // the call's reply key (newReplyKey): names a claim-checked reply; "" without a store
	ref              *nats.Msg        // the stored claim check of the request, once made
	pending          map[int]struct{} // attempts sent and not answered yet
	discarded        chan struct{}
	discardRequested bool
}

// sendAttempt sends one attempt with the reply subject reply. An error
// means nothing of this attempt was written.
func (cs *callState) sendAttempt(reply string) error {
	c, m := cs.c, cs.m
	for {
		var msg *nats.Msg
		var size, capped int64
		var msLen int
		var bad error
		v, _, err := c.st.Send(cs.callCtx, connlimit.Send{
			Decide: func(limit int64) connlimit.Verdict {
				capped = c.capLimit(limit)
				ms := strconv.FormatInt(timeoutMS(time.Until(cs.deadline)), 10)
				msLen = len(ms)
				msg = &nats.Msg{Subject: m.Subject, Reply: reply}
				if cs.ref != nil {
					msg.Header = cloneHeader(cs.ref.Header)
					msg.Header[HeaderTimeout] = []string{ms}
				} else {
					msg.Header, msg.Data = c.requestHeader(cs.key, m.Header, HeaderTimeout, ms), m.Data
					if cs.co.opID != "" {
						msg.Header[HeaderOperationID] = []string{cs.co.opID}
					}
					if k, isBad := wire.InvalidHeaderKey(msg.Header); isBad {
						bad = notSent(CodeInvalidArgument, fmt.Sprintf("invalid header key %q; not sent", k), nats.ErrBadHeaderMsg)
						return connlimit.Refuse
					}
				}
				size = int64(MsgSize(msg))
				return connlimit.Decide(size, capped, connlimit.NoClaimCheck)
			},
			Write: func() error { return c.nc.PublishMsg(msg) },
		})
		envelopeAttr(cs.callCtx, size)
		switch {
		case bad != nil:
			return bad
		case err != nil:
			// nats.go's publish fails only before it writes anything.
			return callerr.SendError(cs.ctx, err, false)
		case v == connlimit.Fits:
			return nil
		case c.store == nil:
			return callerr.TooLarge("request", size, capped, nil)
		case cs.ref != nil:
			return callerr.TooLarge("claim-check reference of the request", size, capped, nil)
		}
		if err := cs.upload(capped, msLen); err != nil {
			return err
		}
		// Send the reference (or, when the limit rose meanwhile, the request).
	}
}

// upload stores the request as a claim check (once per call). msLen is the
// length of the timeout header's value, reserved in the decision.
func (cs *callState) upload(limit int64, msLen int) error {
	c, m := cs.c, cs.m
	h := c.requestHeader(cs.key, m.Header)
	if cs.co.opID != "" {
		h[HeaderOperationID] = []string{cs.co.opID}
	}
	pm := &nats.Msg{Subject: m.Subject, Header: h, Data: m.Data}
	// The timeout header is added to the reference; its value only shrinks.
	reserve := wire.LineSize(HeaderTimeout, strings.Repeat("9", msLen))
	ref, err := claimops.For(c.store).Prepare(cs.callCtx, pm, reserve, limit, "")
	if err != nil {
		return uploadError(cs.ctx, pm, limit, err)
	}
	if ref == pm {
		// The limit rose meanwhile and the request fits: send it whole.
		return nil
	}
	claimCheckAttr(cs.ctx, len(m.Data))
	cs.ref = ref
	return nil
}

// await waits up to wait for a reply to any attempt of the call; attempt
// is the one just sent. A reply to an earlier attempt that still comes
// answers the call when it is a success; an answer of the attempt's own
// that would end the call (a remote error or no responders on the last
// attempt, or one that is not sent again) is held while an earlier attempt
// is still unanswered: the call then waits, up to its deadline, for that
// earlier answer, since one attempt alone would have waited for it (a
// responder that de-duplicates on the operation ID may fail a repeat fast
// while the first delivery is still running).
func (cs *callState) await(mux *replyMux, mc *muxCall, attempt int, wait time.Duration) (*nats.Msg, error) {
	lost, lostErr := mux.lostLink()
	t := time.NewTimer(wait)
	defer t.Stop()
	var held error // the attempt's own final answer, held (see above)
	hold := func(err error) bool {
		if held == nil && cs.earlierPending(attempt) && endsCall(cs.co, attempt, err) {
			held = err
			t.Reset(time.Until(cs.deadline))
			return true
		}
		return false
	}
	for {
		select {
		case r := <-mc.ch:
			delete(cs.pending, r.attempt)
			var rerr error
			switch {
			case callerr.IsNoResponders(r.msg):
				rerr = notDelivered()
			default:
				if e := callerr.RemoteError(r.msg); e != nil {
					rerr = e
				}
			}
			switch {
			case rerr == nil:
				return r.msg, nil
			case r.attempt == attempt && !hold(rerr):
				return nil, rerr
			case held != nil && !cs.earlierPending(attempt):
				return nil, held // every earlier attempt has failed too
			}
			// An earlier attempt failed while this one is still out, or
			// this one's answer is held.
		case <-t.C:
			if held != nil {
				return nil, held
			}
			if time.Now().Before(cs.deadline) {
				return nil, mayHaveRun(CodeDeadlineExceeded, "no reply within the attempt's wait after sending; it may have run", errAttemptTimedOut)
			}
			return nil, callerr.SendError(cs.ctx, context.DeadlineExceeded, true)
		case <-cs.callCtx.Done():
			if held != nil && cs.callCtx.Err() == context.DeadlineExceeded {
				return nil, held // the deadline the hold waited for
			}
			return nil, callerr.SendError(cs.ctx, cs.callCtx.Err(), true)
		case <-lost:
			return nil, callerr.SendError(cs.ctx, lostErr(), true)
		}
	}
}

// earlierPending reports whether an attempt before attempt was sent and
// has had no answer yet.
func (cs *callState) earlierPending(attempt int) bool {
	for a := range cs.pending {
		if a < attempt {
			return true
		}
	}
	return false
}

// endsCall reports whether err, attempt's answer, ends a call with
// options co: the last attempt's, or one that is not sent again (see
// Attempts).
func endsCall(co callOpts, attempt int, err error) bool {
	return attempt >= max(co.attempts, 1) || !resendable(err, co.opID != "")
}

// discardAsync starts deleting the stored request, if any.
func (cs *callState) discardAsync() {
	if cs.ref == nil || cs.discardRequested {
		return
	}
	cs.discardRequested = true
	cs.discarded = make(chan struct{})
	ref := cs.ref
	go func() {
		defer close(cs.discarded)
		cs.c.discard(cs.ctx, ref) // a failure is reported; the bucket's TTL removes it
	}()
}

// discard deletes the stored request, if any, and waits until it is gone.
// It waits at most discardWait: a deletion slowed by a restart goes on
// in the background and does not hold up the call.
func (cs *callState) discard() {
	cs.discardAsync()
	if cs.discarded != nil {
		t := time.NewTimer(discardWait)
		defer t.Stop()
		select {
		case <-cs.discarded:
		case <-t.C:
		}
	}
}

// discardWait bounds how long a call waits for its request payload's
// deletion before it returns.
const discardWait = time.Second

// cloneHeader copies h and its value slices.
func cloneHeader(h nats.Header) nats.Header {
	c := make(nats.Header, len(h)+1)
	for k, v := range h {
		c[k] = append([]string(nil), v...)
	}
	return c
}
