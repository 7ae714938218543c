package shim

import (
	"context"

	"github.com/natssend/natssend/internal/connlimit"
)

// watchDenied returns callCtx ended at once when the server reports (on a
// connection made by Connect) that it dropped a publish to subject or
// refused a subscription under the connection's inbox prefix, which the
// reply would need: a denied request ends within a round trip instead of
// at its deadline. stop ends the watch.
func (c *Client) watchDenied(callCtx context.Context, subject string) (context.Context, context.CancelFunc) {
	return c.st.WatchDenied(callCtx, []string{subject}, []string{c.inboxes})
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
