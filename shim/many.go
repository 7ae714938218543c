package shim

import (
	"context"
	"errors"
	"iter"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/callerr"
	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/wire"
)

// RequestMany sends data to subject once and yields the replies as they
// arrive, for scatter-gather: a vote, a discovery request answered by
// every node, a status fan-out. The request is sent when the sequence is
// first ranged over (a second range yields ErrSequenceReused and sends
// nothing); breaking out of the loop stops the collection.
//
// The collection ends at the call's deadline (the earlier of ctx's and the
// call's Timeout, or the client's WithTimeout when the call sets none),
// after MaxReplies replies, after a StallTimeout gap since the previous
// reply arrived (however long the loop body took), or at the first reply
// a Sentinel matches (not yielded). A call that got at least one reply
// ends silently; one that got none yields a single error: no responders
// is OutcomeNotRun (nobody got the request), anything else, the deadline
// included, is OutcomeUnknown (responders may have run).
//
// The request is checked as Request checks it (the limit with the header
// block, the client's headers, HeaderTimeout, OperationID); a request over
// the limit is refused, never claim-checked. Attempts is ignored: the
// request is never sent again. Replies are not claim-checked: the request
// does not carry HeaderAcceptClaimCheck (it carries HeaderMaxPayload), so
// a natssend responder answers a reply over its limit or the caller's with
// a PAYLOAD_TOO_LARGE error reply (a claim-checked
// reply that comes anyway is read, and deleted, through the Client's
// store, or is CodeReplyLost without one). A reply with micro error
// headers is yielded as a *Error (Remote true) and the collection goes
// on; so is a loss of replies to a slow consumer (nats.ErrSlowConsumer).
func (c *Client) RequestMany(ctx context.Context, subject string, data []byte, opts ...ManyOption) iter.Seq2[*nats.Msg, error] {
	var used atomic.Bool
	return func(yield func(*nats.Msg, error) bool) {
		if used.Swap(true) {
			yield(nil, notSent(CodeInvalidArgument, "RequestMany's sequence ranged over again: its request is sent once; not sent", ErrSequenceReused))
			return
		}
		c.requestManyTraced(ctx, &nats.Msg{Subject: subject, Data: data}, opts, yield)
	}
}

func (c *Client) requestMany(ctx context.Context, m *nats.Msg, opts []ManyOption, yield func(*nats.Msg, error) bool) {
	in := newManyInbox()
	sub, callCtx, cancel, co, err := c.sendMany(ctx, m, opts, in)
	if err != nil {
		yield(nil, err)
		return
	}
	defer cancel()
	defer func() { _ = sub.Unsubscribe() }()
	n := 0
	var prev time.Time // when the previous reply arrived
	for {
		var by time.Time
		if co.x.stall > 0 && n > 0 {
			by = prev.Add(co.x.stall)
		}
		a, err := in.next(callCtx, by)
		msg := a.m
		switch {
		case errors.Is(err, nats.ErrSlowConsumer):
			if !yield(nil, mayHaveRun(CodeInternal, "replies were dropped: the caller consumed them too slowly", err)) {
				return
			}
			continue
		case errors.Is(err, errStalled):
			return
		case err != nil:
			if n == 0 {
				if cerr := callCtx.Err(); cerr != nil {
					err = cerr
				}
				yield(nil, deniedError(connlimit.DeniedCause(callCtx), callerr.SendError(ctx, err, true)))
			}
			return
		case callerr.IsNoResponders(msg):
			if n == 0 {
				yield(nil, callerr.SendError(ctx, nats.ErrNoResponders, true))
			}
			return
		case co.x.sentinel != nil && co.x.sentinel(msg):
			return
		}
		n++
		prev = a.at
		var ok bool
		if rerr := callerr.RemoteError(msg); rerr != nil {
			ok = yield(nil, rerr)
		} else if r, err := c.resolveReply(ctx, callCtx, msg); err != nil {
			ok = yield(nil, err) // a claim-checked reply that came anyway, unreadable
		} else {
			ok = yield(r, nil)
		}
		if !ok || (co.x.max > 0 && n >= co.x.max) {
			return
		}
	}
}

// sendMany checks and sends the request once, with a fresh inbox
// subscribed for the replies (into in).
func (c *Client) sendMany(ctx context.Context, m *nats.Msg, opts []ManyOption, in *manyInbox) (*nats.Subscription, context.Context, context.CancelFunc, callOpts, error) {
	co, deadline, err := c.setUp(ctx, m, func() (callOpts, error) { return manyOptions(opts) })
	fail := func(err error) (*nats.Subscription, context.Context, context.CancelFunc, callOpts, error) {
		return nil, nil, nil, co, err
	}
	if err != nil {
		return fail(err)
	}
	if err := connUsable(c.nc); err != nil {
		return fail(err)
	}
	dctx, cancelDeadline := context.WithDeadline(ctx, deadline)
	callCtx, stop := c.watchDenied(dctx, m.Subject)
	cancel := func() { stop(); cancelDeadline() }
	sub, err := c.nc.Subscribe(c.replyInbox(callCtx), in.onMsg)
	if err != nil {
		cancel()
		return fail(callerr.SendError(ctx, err, false))
	}
	var (
		size, capped int64
		bad          error
		msg          nats.Msg
	)
	v, _, err := c.st.Send(callCtx, connlimit.Send{
		Decide: func(limit int64) connlimit.Verdict {
			capped = c.capLimit(limit)
			hdr, hdrSize, err := c.header(m.Header, timeoutMS(time.Until(deadline)), co.opID)
			if err != nil {
				bad = err
				return connlimit.Refuse
			}
			if _, ok := hdr[HeaderAcceptClaimCheck]; ok {
				// Replies are not claim-checked (see RequestMany), but
				// are decided against the caller's limit still: a copy,
				// since hdr may be shared.
				own := make(nats.Header, len(hdr))
				for k, v := range hdr {
					if k != HeaderAcceptClaimCheck {
						own[k] = v
					}
				}
				if lim := c.limitText(); lim != "" {
					own[HeaderMaxPayload] = []string{lim}
				}
				hdr, hdrSize = own, wire.HeaderSize(own)
			}
			size = int64(hdrSize + len(m.Data))
			msg = nats.Msg{Subject: m.Subject, Reply: sub.Subject, Header: hdr, Data: m.Data}
			return connlimit.Decide(size, capped, connlimit.NoClaimCheck)
		},
		Write: func() error { return c.nc.PublishMsg(&msg) },
	})
	switch {
	case bad != nil:
		err = bad
	case err != nil:
		err = callerr.SendError(ctx, err, false) // a publish fails only before writing
	case v != connlimit.Fits:
		err = callerr.TooLarge("request", size, capped, nil)
	}
	if err != nil {
		err = deniedError(connlimit.DeniedCause(callCtx), err)
		_ = sub.Unsubscribe()
		cancel()
		return fail(err)
	}
	return sub, callCtx, cancel, co, nil
}
