package shim

import (
	"context"
	"slices"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/callerr"
	"github.com/natssend/natssend/internal/connlimit"
)

// streamOpen is the opening of one RequestMsgStream call: its attempts
// (the Attempts schedule, see runAttempts) until a responder's first frame
// arrives. The request is prepared (and claim-checked) once for the call
// and deleted once the call is open or has failed; every attempt has a
// reply inbox of its own, and the first stream to start, of any attempt
// still waited for, is the call's (the others are closed, which tells a
// responder that started one to stop).
type streamOpen struct {
	c     *Client
	ctx   context.Context
	m     *nats.Msg
	co    callOpts
	first time.Time // the wait for the first frame ends then

	fctx    context.Context // ctx, ending at first or at a denial
	denied  context.Context // ctx, ending at a denial (see watchDenied)
	req     *nats.Msg       // the request, once prepared
	stored  bool            // req is a claim check
	pending []*pendingStream
	signals chan *pendingStream
	done    chan struct{} // closed when the opening is over
}

// pendingStream is an attempt's stream, sent and not started.
type pendingStream struct {
	rs      *ReplyStream
	attempt int
}

func (o *streamOpen) run() (*ReplyStream, error) {
	var cancel, stop context.CancelFunc
	o.denied, stop = o.c.watchDenied(o.ctx, o.m.Subject)
	o.fctx, cancel = context.WithDeadline(o.denied, o.first)
	o.signals, o.done = make(chan *pendingStream), make(chan struct{})
	defer func() {
		close(o.done)
		cancel()
		stop()
		for _, p := range o.pending {
			_ = p.rs.Close() // an attempt not taken
		}
		if o.stored {
			// The responder resolved the request before it answered, or
			// will not be waited for.
			o.c.discard(o.ctx, o.req) // a failure is reported; the bucket's TTL removes it
		}
	}()
	return runAttempts(o.ctx, newSchedule(o.co, o.first), func(attempt int, wait func() time.Duration) (*ReplyStream, bool, error) {
		if err := o.send(attempt); err != nil {
			return nil, false, deniedError(connlimit.DeniedCause(o.denied), err)
		}
		rs, err := o.await(attempt, wait())
		return rs, false, err
	})
}

// send sends one attempt, on a reply inbox of its own. An error means
// nothing of this attempt was written.
func (o *streamOpen) send(attempt int) error {
	c, ctx := o.c, o.ctx
	if err := connUsable(c.nc); err != nil {
		return err
	}
	rs := newReplyStream(ctx, c.nc, o.co.x.window, o.co.x.idle)
	reply := c.replyInbox(o.denied)
	sub, err := c.nc.Subscribe(reply, rs.onMsg)
	if err != nil {
		return callerr.SendError(ctx, err, false)
	}
	rs.r.SetSub(sub)
	if err := o.publish(reply); err != nil {
		_ = rs.Close()
		return err
	}
	p := &pendingStream{rs: rs, attempt: attempt}
	o.pending = append(o.pending, p)
	go func() {
		select {
		case <-rs.startCh:
			select {
			case o.signals <- p:
			case <-o.done:
			}
		case <-o.done:
		}
	}()
	return nil
}

// publish sends the request, prepared once for the call (a plain request
// is prepared again, as a claim check, when the limit fell below it on a
// new link), with reply as its reply subject and the time the call has
// left now (HeaderTimeout, HeaderStream).
func (o *streamOpen) publish(reply string) error {
	c := o.c
	for again := true; ; again = false {
		if o.req == nil {
			req, stored, err := c.streamRequest(o.ctx, o.fctx, o.m, o.co)
			if err != nil {
				return err
			}
			o.req, o.stored = req, stored
		}
		req := *o.req // the same body (or reference), a reply inbox of its own
		req.Reply, req.Header = reply, cloneHeader(o.req.Header)
		setStreamTimes(o.ctx, o.fctx, req.Header, o.co)
		v, limit, err := c.st.Send(o.fctx, connlimit.Send{
			Decide: func(limit int64) connlimit.Verdict {
				return connlimit.Decide(int64(MsgSize(&req)), c.capLimit(limit), connlimit.NoClaimCheck)
			},
			Write: func() error { return c.nc.PublishMsg(&req) },
		})
		envelopeOf(o.ctx, &req)
		switch {
		case err != nil:
			return callerr.SendError(o.ctx, err, false) // a publish fails only before writing
		case v == connlimit.Fits:
			return nil
		case again && !o.stored && c.store != nil:
			o.req = nil // the limit fell since it was prepared (a new link)
			continue
		}
		return callerr.TooLarge("stream request", int64(MsgSize(&req)), c.capLimit(limit), nil)
	}
}

// await waits up to wait for the first frame of any attempt's stream;
// attempt is the one just sent. An answer of its own that would end the
// call (no responders, an error reply) is held while an earlier attempt's
// stream is still pending, as Client.call's await does.
func (o *streamOpen) await(attempt int, wait time.Duration) (*ReplyStream, error) {
	t := time.NewTimer(wait)
	defer t.Stop()
	var held error
	for {
		select {
		case p := <-o.signals:
			o.pending = slices.DeleteFunc(o.pending, func(q *pendingStream) bool { return q == p })
			err := p.rs.begin() // a stream that started, or why there is none
			if err == nil {
				p.rs.watchDenials(o.c.st)
				return p.rs, nil
			}
			earlier := slices.ContainsFunc(o.pending, func(q *pendingStream) bool { return q.attempt < attempt })
			switch {
			case p.attempt == attempt && held == nil && earlier && endsCall(o.co, attempt, err):
				held = err
				t.Reset(time.Until(o.first))
			case p.attempt == attempt && held == nil:
				return nil, err
			case held != nil && !earlier:
				return nil, held
			}
		case <-t.C:
			if held != nil {
				return nil, held
			}
			if time.Now().Before(o.first) {
				return nil, mayHaveRun(CodeDeadlineExceeded, "no first frame within the attempt's wait after sending; it may have run", errAttemptTimedOut)
			}
			return nil, callerr.SendError(o.ctx, context.DeadlineExceeded, true)
		case <-o.denied.Done():
			if o.ctx.Err() == nil {
				return nil, deniedError(connlimit.DeniedCause(o.denied), callerr.SendError(o.ctx, context.Cause(o.denied), true))
			}
			if held != nil && o.ctx.Err() == context.DeadlineExceeded {
				return nil, held // the deadline the hold waited for
			}
			return nil, callerr.SendError(o.ctx, o.ctx.Err(), true)
		}
	}
}
