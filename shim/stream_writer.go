package shim

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/xfer"
)

// StreamWriter is the responder's side of a transfer stream, given to a
// StreamHandlerFunc. Like an http.ResponseWriter: set Header before the
// first Write or Flush, Write the body, Flush to send what is buffered now.
// It is safe for concurrent use, but Writes from several goroutines
// interleave in the order they get the writer (a Write that waits for
// credit may be interleaved by others' bytes). A goroutine that outlives
// the StreamHandlerFunc gets ErrStreamClosed from Write and Flush.
type StreamWriter struct {
	s *streamOut
}

// outFrame is a frame the caller has not acknowledged yet.
type outFrame struct {
	off  int64
	body []byte // prefix + payload
	hdr  nats.Header
	at   time.Time // a data frame's first publication, when it samples the round trip (see flushLocked)
}

// spareBuf is the buffer of a frame the caller acknowledged, to be filled
// again once the digest is past end (its bytes hashed).
type spareBuf struct {
	body []byte
	end  int64
}

// end is the stream offset after f.
func (f *outFrame) end() int64 {
	if f.body[0] == frameData {
		return f.off + int64(len(f.body)-framePrefix)
	}
	return f.off
}

// streamOut is the state of one outgoing stream.
type streamOut struct {
	nc     *nats.Conn
	st     *connlimit.State
	inbox  string // the caller's
	ctrl   string // ours
	idle   time.Duration
	window int64 // the window the caller declared: it may grant no more
	peer   int64 // the caller connection's max-payload (0: not said): frames fit both ends
	ctx    context.Context
	cancel context.CancelCauseFunc
	stop   chan struct{} // ends the heartbeat goroutine
	beatWG sync.WaitGroup

	mu          sync.Mutex
	cond        sync.Cond
	hdr         nats.Header
	sub         *nats.Subscription
	started     bool
	returned    bool // the handler returned: no more writes
	ended       bool // the end or error frame was sent
	final       bool // the caller acknowledged the end
	ackLate     bool // the wait for the final acknowledgement is over
	failErr     error
	buf         []byte     // prefix + payload being filled; nil when none
	free        []spareBuf // frame buffers to fill again, once hashed
	sent        int64      // stream offset after the last data frame
	granted     int64      // the caller's credit: data may be sent while sent < granted
	acked       int64      // the caller has received [0, acked)
	frames      []outFrame
	start       *outFrame    // the start frame, until the first ack
	startAt     time.Time    // when the start frame went out: its ack samples the round trip
	digest      byte         // the digest's kind (xfer.DigestSHA256 or the best the caller checks)
	sum         *xfer.Digest // of the frames sent, hashed on a goroutine of its own
	lastLimit   int64        // the limit of the last frame buffer
	lastCtl     time.Time
	lastSend    time.Time
	resentAt    time.Time     // when the last resend went out
	resentTo    int64         // the stream offset it covered up to
	resentAcked int64         // what the caller had acknowledged then
	repeats     int           // repeats honoured in a row (resendLocked)
	rtt         time.Duration // the least round trip sampled (sampleLocked); 0: none yet
	goneAt      time.Time     // a no-responders status for our frames: the caller's inbox is gone
	firstBy     *time.Timer   // ends ctx when the caller's wait for the first frame is over; nil: not said
}

func newStreamOut(ctx context.Context, nc *nats.Conn, st *connlimit.State, inbox string, sr streamReq) *streamOut {
	s := &streamOut{nc: nc, st: st, inbox: inbox, ctrl: randomInbox(nc), idle: sr.idle, window: sr.window,
		granted: xfer.StartCredit(sr.window), digest: sr.digest, sum: xfer.NewDigest(sr.digest), stop: make(chan struct{})}
	s.cond.L = &s.mu
	s.ctx, s.cancel = context.WithCancelCause(ctx)
	if first := sr.first; first > 0 {
		// The caller stops waiting for the first frame then.
		s.firstBy = time.AfterFunc(first, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if !s.started {
				s.cancel(ErrCallerGone) // its AfterFunc runs on a goroutine of its own
			}
		})
	}
	// Wake a Write waiting for credit when the context ends.
	context.AfterFunc(s.ctx, func() {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	return s
}

// Header returns the header map sent with the stream's first frame. Set it
// before the first Write or Flush; later changes are not sent. The header
// block counts against the responder connection's max_payload.
func (w *StreamWriter) Header() nats.Header {
	if w == nil || w.s == nil {
		return nats.Header{}
	}
	s := w.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hdr == nil {
		s.hdr = nats.Header{}
	}
	return s.hdr
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
	s := w.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writableLocked(); err != nil {
		return 0, err
	}
	n := 0
	for len(p) > 0 {
		// Checked again at every frame: another goroutine's Write may
		// have waited for credit meanwhile, and the handler returned.
		if err := s.stoppedLocked(true); err != nil {
			return n, err
		}
		if s.buf == nil {
			b, err := s.newBufLocked()
			if err != nil {
				return n, err
			}
			s.buf = b
		}
		k := min(cap(s.buf)-len(s.buf), len(p))
		s.buf = append(s.buf, p[:k]...)
		p = p[k:]
		n += k // in the stream's buffer: sent by this flush, a later one or the end
		if len(s.buf) == cap(s.buf) {
			if err := s.flushLocked(true); err != nil {
				return n, err
			}
		}
	}
	return n, nil
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
	s := w.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writableLocked(); err != nil {
		return err
	}
	return s.flushLocked(true)
}

// writableLocked checks that the stream takes writes and starts it.
func (s *streamOut) writableLocked() error {
	if err := s.stoppedLocked(true); err != nil {
		return err
	}
	if !s.started {
		return s.startLocked()
	}
	return nil
}

// stoppedLocked returns why no more data may be sent, or nil. byWriter:
// for Write and Flush, which stop once the StreamHandlerFunc returned (a
// writer that outlives its handler); finish sends what they buffered.
func (s *streamOut) stoppedLocked(byWriter bool) error {
	switch {
	case (byWriter && s.returned) || s.ended:
		return notSent(CodeInvalidArgument, "Write or Flush after the StreamHandlerFunc returned", ErrStreamClosed)
	case s.failErr != nil:
		return s.failErr
	}
	return s.goneErrLocked()
}

// goneErrLocked returns the error of writing to a caller that is gone.
func (s *streamOut) goneErrLocked() error {
	err := s.ctx.Err()
	if err == nil {
		return nil
	}
	cause := context.Cause(s.ctx)
	msg := "the caller of the stream is gone"
	if errors.Is(cause, ErrStreamCanceled) {
		msg = "the caller closed the stream"
	} else if err == context.DeadlineExceeded {
		msg = "the caller's deadline passed"
	}
	cerr := err
	if cause != nil && cause != err {
		cerr = errors.Join(cause, err)
	}
	return &Error{Code: ctxCode(err), Message: msg, Sent: true, outcome: OutcomeUnknown, err: cerr}
}

// startLocked subscribes the control inbox and sends the start frame.
func (s *streamOut) startLocked() error {
	var h nats.Header
	if len(s.hdr) > 0 {
		h = make(nats.Header, len(s.hdr))
		for k, v := range s.hdr {
			h[k] = append([]string(nil), v...)
		}
	}
	if err := checkMsg(s.inbox, s.ctrl, h); err != nil { // the frames' reply subject is s.ctrl
		s.failErr = err
		return err
	}
	body := make([]byte, framePrefix+1, framePrefix+2)
	xfer.PutPrefix(body, frameStart, 0)
	body[framePrefix] = streamVersion
	if s.digest != xfer.DigestSHA256 {
		body = append(body, s.digest) // a caller that checks SHA-256 only is never sent one
	}
	limit, err := s.st.Limit(s.ctx)
	if err != nil {
		s.failErr = sendError(s.ctx, err, false)
		return s.failErr
	}
	limit = s.fitPeer(limit)
	if size := int64(HeaderSize(h) + len(body)); size > limit {
		s.failErr = tooLarge("stream start frame (the StreamWriter's headers)", size, limit, nil)
		return s.failErr
	}
	sub, err := s.nc.Subscribe(s.ctrl, s.onCtl)
	if err != nil {
		s.failErr = sendError(s.ctx, err, false)
		return s.failErr
	}
	s.sub = sub
	s.started = true
	if s.firstBy != nil {
		s.firstBy.Stop()
	}
	s.lastCtl = time.Now()
	s.start = &outFrame{off: 0, body: body, hdr: h}
	s.startAt = time.Now()
	s.beatWG.Add(1)
	go s.beat()
	return s.publishLocked(s.start)
}

// fitPeer lowers the responder connection's limit to the caller's
// max-payload, when the caller said one: a frame must fit the caller's
// server too (across a leafnode, one message over its limit closes the
// whole link).
func (s *streamOut) fitPeer(limit int64) int64 {
	if s.peer > 0 && s.peer < limit {
		return s.peer
	}
	return limit
}

// newBufLocked returns an empty frame buffer sized to the current limit.
func (s *streamOut) newBufLocked() ([]byte, error) {
	limit, err := s.st.Limit(s.ctx)
	switch {
	case err == nil:
		s.lastLimit = limit
	case s.goneErrLocked() != nil:
		return nil, s.goneErrLocked()
	case s.lastLimit > 0 && !s.nc.IsClosed():
		// Reconnecting: fill a frame of the last link's size; a frame
		// above the next link's limit goes in pieces.
		limit = s.lastLimit
	default:
		return nil, sendError(s.ctx, err, false)
	}
	limit = s.fitPeer(limit)
	if limit <= framePrefix {
		return nil, tooLarge("stream frame", framePrefix+1, limit, nil)
	}
	size := framePrefix + int(xfer.FrameCap(s.window, limit))
	// Oldest first: the digest takes frames in order, so a spare buffer
	// it has not finished with is followed only by others.
	for hashed := s.sum.Hashed(); len(s.free) > 0 && s.free[0].end <= hashed; {
		b := s.free[0]
		s.free[0] = spareBuf{}
		s.free = s.free[1:]
		if cap(b.body) == size { // one of another size (the limit changed) is dropped
			return b.body[:framePrefix], nil
		}
	}
	return make([]byte, framePrefix, size), nil
}

// maxUnacked is the most a responder keeps of frames the caller has not
// acknowledged, whatever window the caller declared (up to
// MaxStreamWindow): a caller that grants a large window and never
// acknowledges would make the responder hold that much for resends.
const maxUnacked = DefaultStreamWindow

// creditLocked is what may be sent now: the caller's credit, within
// maxUnacked of what it acknowledged.
func (s *streamOut) creditLocked() int64 {
	return min(s.granted, s.acked+maxUnacked) - s.sent
}

// flushLocked sends the buffered payload as data frames, each once the
// caller's window allows it and none beyond the credit it granted (the
// caller treats a frame past its credit as a broken stream). A frame waits
// for credit for all of the buffer or at least xfer.MinSend, so the
// credit's edge never cuts a sliver off a frame. While it waits for credit
// other goroutines may write and flush: it looks at the buffer afresh
// after every wait. byWriter: see stoppedLocked.
func (s *streamOut) flushLocked(byWriter bool) error {
	var waited time.Time // when the wait for credit began
	for len(s.buf) > framePrefix {
		if err := s.stoppedLocked(byWriter); err != nil {
			return err
		}
		have := len(s.buf) - framePrefix
		credit := s.creditLocked()
		if credit < xfer.MinSend(s.window, have) {
			if waited.IsZero() {
				waited = time.Now()
			}
			s.cond.Wait()
			continue
		}
		if !waited.IsZero() {
			s.stalledLocked(time.Since(waited))
			waited = time.Time{}
		}
		n := int(min(int64(have), credit))
		var body []byte
		if n == have && len(s.buf) >= cap(s.buf)/2 {
			body, s.buf = s.buf, nil // a full frame: send the buffer itself
		} else {
			// A partial frame (a Flush, or the credit's edge): send an
			// exact copy and keep the rest in the frame buffer.
			body = make([]byte, framePrefix+n)
			copy(body[framePrefix:], s.buf[framePrefix:framePrefix+n])
			rest := copy(s.buf[framePrefix:], s.buf[framePrefix+n:])
			s.buf = s.buf[:framePrefix+rest]
		}
		xfer.PutPrefix(body, frameData, s.sent)
		s.sum.Add(body[framePrefix:]) // hashed while it travels
		f := outFrame{off: s.sent, body: body}
		if s.sent-s.acked <= xfer.Quantum(s.window) {
			// Hardly anything of the stream ahead of it in transit: its
			// acknowledgement times the path, not the stream's own queue.
			f.at = time.Now()
		}
		s.frames = append(s.frames, f)
		s.sent += int64(n)
		if err := s.publishLocked(&s.frames[len(s.frames)-1]); err != nil {
			return err
		}
	}
	return nil
}
