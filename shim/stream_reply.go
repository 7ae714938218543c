package shim

import (
	"context"
	"io"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/stream"
)

// ReplyStream is the caller's side of a transfer stream: an io.ReadCloser
// over the responder's body. Read returns the bytes in order, exactly as
// written, and io.EOF only after the end frame arrived and the whole body's
// length and digest matched. Always Close it. A ReplyStream is not for
// concurrent Reads (like any io.Reader), but Close may be called from
// another goroutine.
type ReplyStream struct {
	r       *stream.Receiver
	startCh <-chan struct{} // closed when the first frame, or the answer that there is none, arrived
}

func newReplyStream(ctx context.Context, nc *nats.Conn, window int64, idle time.Duration) *ReplyStream {
	r := stream.NewReceiver(ctx, nc, window, idle)
	return &ReplyStream{r: r, startCh: r.Started()}
}

// onMsg takes every message of the stream's inbox.
func (rs *ReplyStream) onMsg(m *nats.Msg) { rs.r.OnMsg(m) }

// begin runs once the wait for the first frame is over (stream.Receiver.Begin).
func (rs *ReplyStream) begin() error { return rs.r.Begin() }

// watchDenials ends the stream when the server refuses its flow control
// (stream.Receiver.WatchDenials).
func (rs *ReplyStream) watchDenials(st *connlimit.State) { rs.r.WatchDenials(st) }

// Header returns the responder's headers, from its first frame.
func (rs *ReplyStream) Header() nats.Header {
	if rs == nil {
		return nil
	}
	return rs.r.Header()
}

// Read reads the stream's body. It returns io.EOF only after the end frame
// and a matching digest; a stream cut short returns an error matching
// io.ErrUnexpectedEOF (Classify: OutcomeUnknown), one past ctx's deadline
// an error matching context.DeadlineExceeded, a handler's error its *Error
// (after the bytes written before it), and Read after Close an error
// matching ErrStreamClosed.
func (rs *ReplyStream) Read(p []byte) (int, error) {
	if rs == nil {
		return 0, notSent(CodeInvalidArgument, "nil ReplyStream", ErrStreamClosed)
	}
	return rs.r.Read(p)
}

// WriteTo writes the stream's body to w until its end (io.Copy uses it):
// the frames' payloads go to w as they arrive, without another copy. It
// returns nil at the end of a complete stream, and Read's errors
// otherwise.
func (rs *ReplyStream) WriteTo(w io.Writer) (int64, error) {
	if rs == nil {
		return 0, notSent(CodeInvalidArgument, "nil ReplyStream", ErrStreamClosed)
	}
	return rs.r.WriteTo(w)
}

// Close ends the stream. Before its end, the responder is told: its
// context is cancelled (ErrStreamCanceled) and its Write fails. Close is
// safe to call more than once and from another goroutine than Read.
func (rs *ReplyStream) Close() error {
	if rs == nil {
		return nil
	}
	return rs.r.Close()
}
