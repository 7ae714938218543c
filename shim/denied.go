package shim

import (
	"context"
	"errors"

	"github.com/natssend/natssend/internal/connlimit"
)

// watchDenied returns callCtx ended at once when the server reports (on a
// connection made by Connect) that it dropped a publish to subject or
// refused one of subs, the subscriptions the reply needs (exact subjects;
// replyInbox adds one made later): a denied request ends within a round
// trip instead of at its deadline. The refusal of any other subscription
// on the connection ends nothing. stop ends the watch.
func (c *Client) watchDenied(callCtx context.Context, subject string, subs ...string) (context.Context, context.CancelFunc) {
	return c.st.WatchDenied(callCtx, []string{subject}, subs)
}

// replyInbox returns a new reply inbox of a call of its own (see
// randomInbox) and adds it to the subscriptions that the call's watch,
// made by watchDenied and found in ctx, needs.
func (c *Client) replyInbox(ctx context.Context) string {
	inbox := randomInbox(c.nc)
	connlimit.NeedSub(ctx, inbox)
	return inbox
}

// replySub is the subscription a Client's call needs for its reply: the
// connection's replyMux's, made on first use and again after a refusal.
// When the server refused to make it again, it is that refused
// subscription, which the call's watch then finds refused (connlimit's
// Subscribe remembers it): the call ends before it sends, in the one
// round trip of the verdict. "" when it cannot be made for another reason
// (the call's send reports why).
func (c *Client) replySub() string {
	m, err := muxFor(c.st)
	if err != nil {
		var d *connlimit.Denial
		if errors.As(err, &d) {
			return d.Subject
		}
		return ""
	}
	return m.subj()
}

// deniedError returns err, the error of a call, as d, the permission
// violation that ended the call's wait (see watchDenied, connlimit.Watch),
// when there is one: CodePermissionDenied naming the subject, errors.Is
// nats.ErrPermissionViolation. A dropped publish did not run; a refused
// reply subscription after the request went out may have (the request
// reached the responder, its reply cannot come back), unless err says
// nothing was sent.
func deniedError(d *connlimit.Denial, err error) error {
	if err == nil || d == nil {
		return err
	}
	sent := Classify(err) != OutcomeNotRun
	if d.Op != "subscribe" || !sent {
		return notSent(CodePermissionDenied, d.Error()+"; not delivered", d)
	}
	return mayHaveRun(CodePermissionDenied, d.Error()+" after the request was sent; it may have run", d)
}
