package stream

import (
	"context"
	"errors"
	"hash"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/xfer"
	"github.com/natssend/natssend/outcome"
)

// Receiver is the caller's side of a transfer stream (shim's ReplyStream
// wraps it): an io.ReadCloser over the responder's body. Read returns the
// bytes in order, exactly as written, and io.EOF only after the end frame
// arrived and the whole body's digest matched. It is not for concurrent
// Reads (like any io.Reader), but Close may be called from another
// goroutine. OnMsg takes every message of its inbox's subscription
// (SetSub).
type Receiver struct {
	nc      *nats.Conn
	sub     atomic.Pointer[nats.Subscription]
	ctx     context.Context
	window  int64 // the window declared: the most win grows to
	idle    time.Duration
	done    chan struct{} // closed by cleanup
	once    sync.Once
	stopCtx atomic.Pointer[func() bool]
	// unlisten ends the watch for denials of the stream's control
	// messages (see WatchDenials).
	unlisten atomic.Pointer[func()]
	onEnd    atomic.Pointer[func(err error, read int64)] // telemetry: the stream's end, once
	endOnce  sync.Once

	mu        sync.Mutex
	wake      chan struct{}
	startCh   chan struct{}
	signaled  bool
	startErr  error
	started   bool
	hdr       nats.Header
	ctrl      string
	q         [][]byte // received in order, not yet read
	tailOwned bool     // q's last buffer is a small frames' one (queueLocked), which the next small frame may fill
	recv      int64    // bytes received in order
	consumed  int64    // bytes read
	maxGrant  int64    // the most credit granted: no frame may go past it
	win       xfer.Window
	ackRecv   int64     // recv at the last ack
	ackUsed   int64     // consumed at the last ack
	nAck      int       // frames since the last ack
	sum       hash.Hash // of the bytes received in order, hashed as they arrive (OnMsg runs beside the reader); set by the start frame
	digest    byte      // the digest's kind, from the start frame
	ended     bool      // the end or error frame arrived in order
	endErr    error     // nil: the digest matched
	err       error     // the stream failed here
	closed    bool
	eof       bool
	lastRx    time.Time
	want      int64     // offset a resend was asked from; -1 none
	wantAt    time.Time // when it was asked last
	lostAt    time.Time // when the gap at want was found
}

// errNoStart: the wait for the first frame ended without one.
var errNoStart = errors.New("no first frame")

// NewReceiver returns the caller's side of a stream on nc, bounded by ctx,
// with the window and idle bound its request declared (Marker).
func NewReceiver(ctx context.Context, nc *nats.Conn, window int64, idle time.Duration) *Receiver {
	return &Receiver{nc: nc, ctx: ctx, window: window, maxGrant: xfer.StartCredit(window), win: xfer.NewWindow(window),
		idle: idle, done: make(chan struct{}), wake: make(chan struct{}, 1), startCh: make(chan struct{}),
		want: -1}
}

// SetSub records the subscription of the stream's inbox, whose messages
// go to OnMsg; the Receiver unsubscribes it at the stream's end.
func (r *Receiver) SetSub(sub *nats.Subscription) { r.sub.Store(sub) }

// Started is closed once the first frame, or the answer that there is no
// stream (an error reply, no responders), arrived: then call Begin.
func (r *Receiver) Started() <-chan struct{} { return r.startCh }

// OnEnd sets f to be told, once, how the stream ended (nil: its end frame
// and digest were read) and how many bytes were read (telemetry).
func (r *Receiver) OnEnd(f func(err error, read int64)) { r.onEnd.Store(&f) }

// WindowNow returns the credit window granted now (it grows from
// xfer.InitialWindow toward the window declared).
func (r *Receiver) WindowNow() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.win.Cur
}

// Begin runs once the wait for the first frame is over: it starts the
// stream's liveness and deadline watch, or cleans up and returns why there
// is no stream.
func (r *Receiver) Begin() error {
	r.mu.Lock()
	started, err := r.started, r.startErr
	if !started && err == nil {
		err = errNoStart
		r.err = err
	}
	r.lastRx = time.Now()
	r.mu.Unlock()
	if !started {
		r.cleanup()
		return err
	}
	stop := context.AfterFunc(r.ctx, func() { r.fail(ctxStreamError(r.ctx.Err())) })
	r.stopCtx.Store(&stop)
	select {
	case <-r.done: // ended (or failed) already
		stop()
		return nil
	default:
	}
	go r.keepalive()
	return nil
}

// endErrorLocked is the error of a stream that ended with an error frame:
// the responder's, unless the caller's own deadline has passed by now.
// The responder's context carries that deadline (HeaderTimeout), so its
// error frame and the caller's deadline come at the same moment, and the
// caller's timer may not have fired yet: the caller's deadline is what
// ended the stream.
func (r *Receiver) endErrorLocked() error {
	var re *outcome.Error
	if errors.As(r.endErr, &re) && re.Remote {
		if dl, ok := r.ctx.Deadline(); ok && !time.Now().Before(dl) {
			return ctxStreamError(context.DeadlineExceeded)
		}
	}
	return r.endErr
}

// Header returns the responder's headers, from its first frame.
func (r *Receiver) Header() nats.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hdr
}

// Read reads the stream's body. It returns io.EOF only after the end frame
// and a matching digest; a stream cut short returns an error matching
// io.ErrUnexpectedEOF (Classify: OutcomeUnknown), one past ctx's deadline
// an error matching context.DeadlineExceeded, a handler's error its *outcome.Error
// (after the bytes written before it), and Read after Close an error
// matching ErrClosed.
func (r *Receiver) Read(p []byte) (int, error) {
	r.mu.Lock()
	if err := r.readyLocked(len(p) > 0); err != nil {
		if err == errNoWait {
			return 0, nil // an empty read of a stream with nothing queued
		}
		return 0, err
	}
	n := 0
	for n < len(p) && len(r.q) > 0 {
		k := copy(p[n:], r.q[0])
		n += k
		if k == len(r.q[0]) {
			r.q[0] = nil
			r.q = r.q[1:]
		} else {
			r.q[0] = r.q[0][k:]
		}
	}
	if len(r.q) == 0 {
		r.tailOwned = false // the buffer left with the reader
	}
	r.tookLocked(n)
	return n, nil
}

// errNoWait is readyLocked's answer when nothing is queued and it may not
// wait.
var errNoWait = errors.New("natssend: nothing queued")

// readyLocked returns nil, with r.mu still held, once bytes are queued;
// otherwise, with r.mu released, Read's error (io.EOF at the end of a
// complete stream, the stream's failure, Read after Close), or errNoWait
// when nothing is queued and block is false. r.mu is held on entry.
func (r *Receiver) readyLocked(block bool) error {
	for {
		switch {
		case r.closed:
			r.mu.Unlock()
			return outcome.MayHaveRunError(outcome.CodeCanceled, "Read after Close", ErrClosed)
		case r.eof:
			n := r.consumed
			r.mu.Unlock()
			r.reportEnd(nil, n)
			return io.EOF
		case r.err != nil:
			err, n := r.err, r.consumed
			r.mu.Unlock()
			r.reportEnd(err, n)
			return err
		}
		if err := r.ctx.Err(); err != nil {
			r.ctxEndedLocked(err)
			continue
		}
		if len(r.q) > 0 {
			return nil
		}
		if r.ended {
			if r.endErr != nil {
				r.err = r.endErrorLocked()
				continue
			}
			r.eof = true
			continue
		}
		r.mu.Unlock()
		if !block {
			return errNoWait
		}
		<-r.wake
		r.mu.Lock()
	}
}

// tookLocked counts n bytes the reader took, acknowledges every quantum
// consumed (which raises the credit), and releases r.mu.
func (r *Receiver) tookLocked(n int) {
	r.consumed += int64(n)
	if !r.ended && r.consumed-r.ackUsed >= xfer.Quantum(r.window) {
		r.ackLocked(false)
	}
	r.mu.Unlock()
}

// WriteTo writes the stream's body to w until its end (io.Copy uses it):
// the frames' payloads go to w as they arrive, without another copy. It
// returns nil at the end of a complete stream, and Read's errors
// otherwise.
func (r *Receiver) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for {
		chunk, err := r.next()
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
		n, werr := w.Write(chunk)
		total += int64(n)
		if werr != nil {
			return total, werr
		}
		if n < len(chunk) {
			return total, io.ErrShortWrite
		}
	}
}

// next returns the next received chunk, consumed, or Read's error.
func (r *Receiver) next() ([]byte, error) {
	r.mu.Lock()
	if err := r.readyLocked(true); err != nil {
		return nil, err
	}
	chunk := r.q[0]
	r.q[0] = nil
	r.q = r.q[1:]
	if len(r.q) == 0 {
		r.tailOwned = false // chunk leaves with the caller: never filled again
	}
	r.tookLocked(len(chunk))
	return chunk, nil
}

// Close ends the stream. Before its end, the responder is told: its
// context is cancelled (ErrCanceled) and its Write fails. Close is
// safe to call more than once and from another goroutine than Read.
func (r *Receiver) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	if r.started && !r.ended && r.err == nil {
		r.cancelLocked()
	}
	var endErr error
	switch {
	case r.err != nil:
		endErr = r.err
	case !r.eof:
		endErr = outcome.MayHaveRunError(outcome.CodeCanceled, "stream closed before its end", ErrClosed)
	}
	n := r.consumed
	r.notify()
	r.mu.Unlock()
	r.cleanup()
	r.reportEnd(endErr, n)
	return nil
}

// reportEnd tells the stream's telemetry, once, how it ended (nil: the
// end frame and its digest were read) and how many bytes were read.
func (r *Receiver) reportEnd(err error, read int64) {
	if f := r.onEnd.Load(); f != nil {
		r.endOnce.Do(func() { (*f)(err, read) })
	}
}

// fail ends the stream with err (unless it already ended) and tells the
// responder.
func (r *Receiver) fail(err error) {
	r.mu.Lock()
	r.failLocked(err)
	r.notify()
	r.mu.Unlock()
	r.cleanup()
}

// ctxEndedLocked ends the stream with ctx's end (err), with r.mu held:
// failLocked tells the responder of a stream still running; once the end
// frame has come, nobody is to be told, and ctx still bounds the reading
// of what is buffered.
func (r *Receiver) ctxEndedLocked(err error) {
	serr := ctxStreamError(err)
	r.failLocked(serr)
	if r.err == nil {
		r.err = serr
	}
}

// failLocked is fail's decision, with r.mu held: the first error ends the
// stream, and a started stream's responder is told (its ctx is cancelled
// with ErrProtocol when the responder broke the stream, else with
// ErrCanceled).
func (r *Receiver) failLocked(err error) {
	if r.err == nil && !r.ended && !r.closed {
		r.err = err
		if r.started {
			r.publishCtl(xfer.CancelBody(errors.Is(err, ErrProtocol) || errors.Is(err, ErrCorrupt)))
		}
	}
}

// cleanup unsubscribes and stops the watchers; the bytes received stay
// readable.
func (r *Receiver) cleanup() {
	r.once.Do(func() {
		close(r.done)
		if stop := r.stopCtx.Load(); stop != nil {
			(*stop)()
		}
		if f := r.unlisten.Swap(nil); f != nil {
			(*f)()
		}
		if sub := r.sub.Load(); sub != nil {
			_ = sub.Unsubscribe()
		}
	})
}

func (r *Receiver) notify() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *Receiver) cancelLocked() { r.publishCtl(xfer.CancelBody(false)) }
