package shim

import (
	"errors"
	"io"

	"github.com/natssend/natssend/internal/connlimit"
)

// watchDenials ends the stream, once it has started, when the server
// reports that it dropped one of the caller's control messages (credit,
// acknowledgements: the user may not publish to the responder's control
// inbox) or refused a subscription under the connection's inbox prefix
// (inboxes): the responder would wait for credit that never comes, and the
// caller for frames it cannot get, each until the idle bound. The stream
// fails with CodePermissionDenied naming the subject; the watch ends with
// the stream (cleanup).
func (r *ReplyStream) watchDenials(st *connlimit.State, inboxes string) {
	stop := st.Listen(func(d *connlimit.Denial) {
		if connlimit.SubjectMatches(inboxes, d.Subject) {
			r.fail(&Error{Code: CodePermissionDenied, Sent: true, outcome: OutcomeUnknown, err: errors.Join(d, io.ErrUnexpectedEOF),
				Message: d.Error() + ": the stream's flow control cannot reach the responder, so the stream ended (the caller needs publish permission on the responder's inbox, see docs/permissions.md)"})
		}
	})
	r.unlisten.Store(&stop)
	select {
	case <-r.done: // ended meanwhile: cleanup may have missed the watch
		if f := r.unlisten.Swap(nil); f != nil {
			(*f)()
		}
	default:
	}
}
