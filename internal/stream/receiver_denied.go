package stream

import (
	"errors"
	"io"

	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/outcome"
)

// WatchDenials ends the stream, once it has started, when the server
// reports that it dropped one of this stream's control messages (a publish
// to the responder's control inbox: the user has no allow_responses, or
// it expired) or refused this stream's own inbox subscription: the
// responder would wait for credit that never comes, and the caller for
// frames it cannot get, each until the idle bound. A denial of any other
// subject (another call's, another stream's) leaves it alone. The stream
// fails with outcome.CodePermissionDenied naming the subject; the watch ends with
// the stream (cleanup).
func (r *Receiver) WatchDenials(st *connlimit.State) {
	var inbox string
	if sub := r.sub.Load(); sub != nil {
		inbox = sub.Subject
	}
	stop := st.Listen(func(d *connlimit.Denial) {
		r.mu.Lock()
		ctrl := r.ctrl
		r.mu.Unlock()
		ours := (d.Op == "subscribe" && d.Subject == inbox) || (d.Op != "subscribe" && ctrl != "" && d.Subject == ctrl)
		if ours {
			r.fail(outcome.MayHaveRunError(outcome.CodePermissionDenied, d.Error()+": the stream's flow control cannot reach the responder, so the stream ended (the caller answers the frames: it needs allow_responses with an expiry at least the stream's duration, see docs/permissions.md)",
				errors.Join(d, io.ErrUnexpectedEOF)))
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
