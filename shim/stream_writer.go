package shim

import (
	"context"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/stream"
)

// StreamWriter is the responder's side of a transfer stream, given to a
// StreamHandlerFunc. Like an http.ResponseWriter: set Header before the
// first Write or Flush, Write the body, Flush to send what is buffered now.
// It is safe for concurrent use, but Writes from several goroutines
// interleave in the order they get the writer (a Write that waits for
// credit may be interleaved by others' bytes). A goroutine that outlives
// the StreamHandlerFunc gets ErrStreamClosed from Write and Flush.
type StreamWriter struct {
	s *stream.Sender
}

// newStreamOut starts the responder's side of the stream request sr on
// st's connection: its frames go to inbox, the caller's control messages
// come to an unpredictable inbox of its own; peer is the caller's
// max-payload (0: not said).
func newStreamOut(ctx context.Context, st *connlimit.State, inbox string, sr streamReq, peer int64) *stream.Sender {
	ctrl := randomInbox(st.Conn())
	connlimit.NeedSub(ctx, ctrl) // a refusal of the control inbox ends ctx's watch
	return stream.NewSender(ctx, st, inbox, ctrl, sr, peer)
}

// finishStream ends s after the StreamHandlerFunc returned fnErr (see
// stream.Sender.Finish): a stream that never started is answered with an
// ordinary error reply to req, as Handler answers.
func finishStream(s *stream.Sender, st *connlimit.State, req *nats.Msg, fnErr error) error {
	return s.Finish(fnErr, func(code, msg string, rejected bool) error {
		return respondError(s.Context(), st, req, code, msg, rejected)
	})
}

// Header returns the header map sent with the stream's first frame. Set it
// before the first Write or Flush; later changes are not sent. The header
// block counts against the responder connection's max_payload.
func (w *StreamWriter) Header() nats.Header {
	if w == nil || w.s == nil {
		return nats.Header{}
	}
	return w.s.Header()
}

// Write sends p as part of the stream body, in frames sized to the
// responder connection's current max_payload. It blocks while the caller's
// flow-control window is full (a slow reader slows the writer; nothing is
// dropped) and fails once the caller is gone (closed the stream, its
// deadline passed, or it went silent): the StreamHandlerFunc's context ends
// then too. Bytes may stay buffered until the frame is full: Flush sends
// them now.
func (w *StreamWriter) Write(p []byte) (int, error) {
	if w == nil || w.s == nil {
		return 0, notSent(CodeInvalidArgument, "nil StreamWriter", ErrStreamClosed)
	}
	return w.s.Write(p)
}

// Flush sends what Write buffered now (a token-by-token stream flushes
// after every token), subject to the caller's window like Write. Before
// the first Write it sends the stream's first frame with the headers: the
// caller's RequestStream returns then, so a handler that works a while
// before its first byte flushes first to meet the caller's Timeout (which
// bounds only the wait for the first frame); from then on an error is an
// error frame, no longer an ordinary error reply.
func (w *StreamWriter) Flush() error {
	if w == nil || w.s == nil {
		return notSent(CodeInvalidArgument, "nil StreamWriter", ErrStreamClosed)
	}
	return w.s.Flush()
}
