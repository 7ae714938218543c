package stream

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/callerr"
	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/xfer"
	"github.com/natssend/natssend/outcome"
)

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
	if f.body[0] == xfer.Data {
		return f.off + int64(len(f.body)-xfer.Prefix)
	}
	return f.off
}

// Sender is the responder's side of one stream: what shim's StreamWriter
// writes through (Header, Write, Flush) and its handler ends (Finish).
// It is safe for concurrent use.
type Sender struct {
	nc      *nats.Conn
	st      *connlimit.State
	inbox   string // the caller's
	ctrl    string // ours
	idle    time.Duration
	window  int64 // the window the caller declared: it may grant no more
	maxHeld int64 // the most held of unacknowledged frames: maxUnacked (tests lower it)
	peer    int64 // the caller connection's max-payload (0: not said): frames fit both ends
	ctx     context.Context
	cancel  context.CancelCauseFunc
	stop    chan struct{} // ends the heartbeat goroutine
	beatWG  sync.WaitGroup

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

// NewSender starts the responder's side of the stream request sr (its
// header, ParseMarker) whose reply subject is inbox, on st's connection:
// ctrl is the control inbox the caller's messages are to come to (an
// unpredictable subject, docs/protocol.md 6.3), peer the caller's
// max-payload (0: not said). ctx bounds the stream; Context is its
// handler's.
func NewSender(ctx context.Context, st *connlimit.State, inbox, ctrl string, sr Req, peer int64) *Sender {
	s := &Sender{nc: st.Conn(), st: st, inbox: inbox, ctrl: ctrl, peer: peer, idle: sr.idle, window: sr.window, maxHeld: maxUnacked,
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

// Context is the stream's context: it ends when the caller closed the
// stream (ErrCanceled), went away (ErrCallerGone) or broke the protocol
// (ErrProtocol), and when the stream ends (ErrClosed).
func (s *Sender) Context() context.Context { return s.ctx }

// Stats returns the bytes sent so far and the least round trip sampled
// (0: none).
func (s *Sender) Stats() (sent int64, rtt time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent, s.rtt
}

// Header returns the header map sent with the stream's first frame. Set it
// before the first Write or Flush; later changes are not sent.
func (s *Sender) Header() nats.Header {
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
// deadline passed, or it went silent): the handler's context ends
// then too. Bytes may stay buffered until the frame is full: Flush sends
// them now.
func (s *Sender) Write(p []byte) (int, error) {
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
func (s *Sender) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writableLocked(); err != nil {
		return err
	}
	return s.flushLocked(true)
}

// writableLocked checks that the stream takes writes and starts it.
func (s *Sender) writableLocked() error {
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
func (s *Sender) stoppedLocked(byWriter bool) error {
	switch {
	case (byWriter && s.returned) || s.ended:
		return outcome.NotRunError(outcome.CodeInvalidArgument, "Write or Flush after the StreamHandlerFunc returned", ErrClosed)
	case s.failErr != nil:
		return s.failErr
	}
	return s.goneErrLocked()
}

// goneErrLocked returns the error of writing to a caller that is gone.
func (s *Sender) goneErrLocked() error {
	err := s.ctx.Err()
	if err == nil {
		return nil
	}
	cause := context.Cause(s.ctx)
	msg := "the caller of the stream is gone"
	if errors.Is(cause, ErrCanceled) {
		msg = "the caller closed the stream"
	} else if err == context.DeadlineExceeded {
		msg = "the caller's deadline passed"
	}
	cerr := err
	if cause != nil && cause != err {
		cerr = errors.Join(cause, err)
	}
	return outcome.MayHaveRunError(callerr.CtxCode(err), msg, cerr)
}
