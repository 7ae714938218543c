package faultmatrix_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// The transfer-stream rows' harness: a StreamHandler on the responder's
// connection, Client.RequestStream (or RequestMsgStream) on the caller's,
// a fault at an exact frame of the frame protocol (shim/stream_wire.go:
// every frame goes to the caller's inbox, its body a kind byte and an
// 8-byte offset; the caller's control messages go to the responder's
// control inbox).

const (
	streamBody  = bigSize  // a stream of 7 data frames at the row's limit
	piece       = 1 << 10  // the responder writes in pieces of this size
	smallWindow = 32 << 10 // the window of rows whose responder must still be writing
	streamIdle  = 2 * time.Second
)

// isFrame matches a message whose body is a frame of kind (a responder's
// frame, or a caller's control message).
func isFrame(kind byte) func(f natstest.Frame) bool {
	return func(f natstest.Frame) bool {
		return strings.HasPrefix(f.Subject, "_INBOX.") && len(f.Data) > 0 && f.Data[0] == kind &&
			(len(f.Data) >= 9 || kind == 'C')
	}
}

// frameDown is the n-th frame of kind delivered to the caller, not yet
// forwarded.
func frameDown(e *env, kind byte, n int) natstest.Rule {
	is := isFrame(kind)
	return natstest.Rule{Dir: natstest.ToClient, Nth: n, Match: func(f natstest.Frame) bool { return e.replyMsg(f) && is(f) }}
}

// frameUp is the n-th frame of kind the responder sends, not yet
// forwarded.
func frameUp(kind byte, n int) natstest.Rule {
	return natstest.Rule{Dir: natstest.ToServer, Subject: "_INBOX.>", Nth: n, Match: isFrame(kind)}
}

// sresp is a row's stream responder: it writes streamBody in pieces, or
// (endless) the body over and over until Write fails.
type sresp struct {
	e        *env
	endless  bool
	fnErr    error // returned after the body
	hold     bool  // wait for release (or the request's ctx) before the first write
	release  chan struct{}
	relOnce  sync.Once
	opened   chan struct{} // closed once RequestStream returned
	openOnce sync.Once
	runs     atomic.Int64
	entered  atomic.Int64
	finished atomic.Int64
	werr     atomic.Pointer[error] // the first Write error
	cause    atomic.Pointer[error] // the context's cause then
	failedAt atomic.Int64          // when Write failed (UnixNano)
	mu       sync.Mutex
	afters   []func()
}

func (r *sresp) releaseAll() { r.relOnce.Do(func() { close(r.release) }) }

func (r *sresp) markOpened() { r.openOnce.Do(func() { close(r.opened) }) }

// whenOpen makes a mid-stream hook wait until RequestStream returned (the
// caller took the start frame, which came before), so that the fault
// meets an open stream and not the wait for the first frame.
func whenOpen(act func(e *env, c *call, r *sresp, f natstest.Frame)) func(e *env, c *call, r *sresp, f natstest.Frame) {
	return func(e *env, c *call, r *sresp, f natstest.Frame) {
		select {
		case <-r.opened:
		case <-time.After(settle):
			e.t.Errorf("RequestStream did not return within %v of its first frames", settle)
		}
		act(e, c, r, f)
	}
}

// afterDone runs f once the responder's MsgHandler returned, or at once
// when it already did.
func (r *sresp) afterDone(f func()) {
	r.mu.Lock()
	if r.finished.Load() > 0 {
		r.mu.Unlock()
		f()
		return
	}
	r.afters = append(r.afters, f)
	r.mu.Unlock()
}

func (r *sresp) handle(ctx context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
	r.runs.Add(1)
	if r.hold {
		select {
		case <-r.release:
		case <-ctx.Done():
		}
	}
	body := payload(streamBody, 3)
	for off := 0; r.endless || off < len(body); off += piece {
		i := off % len(body)
		if _, err := w.Write(body[i : i+piece]); err != nil {
			r.failedAt.Store(time.Now().UnixNano())
			cause := context.Cause(ctx)
			r.cause.Store(&cause)
			r.werr.Store(&err)
			return err
		}
	}
	return r.fnErr
}

// serve subscribes the responder on e.resp.
func (r *sresp) serve(t *testing.T) {
	e := r.e
	mh := shim.StreamHandler(r.handle, shim.Conn(e.resp), shim.ServeClaimChecks(e.rst))
	_, err := e.resp.Subscribe(subject, func(m *nats.Msg) {
		r.entered.Add(1)
		mh(m)
		r.mu.Lock()
		r.finished.Add(1)
		fs := r.afters
		r.afters = nil
		r.mu.Unlock()
		for _, f := range fs {
			f()
		}
	})
	if err == nil {
		err = e.resp.Flush()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// settle waits until the responder is done with whatever reached it.
func (r *sresp) settle(t *testing.T) {
	t.Helper()
	if r.e.resp.IsConnected() {
		_ = r.e.resp.FlushTimeout(5 * time.Second)
	}
	natstest.Eventually(t, settle, func() bool { return r.finished.Load() == r.entered.Load() }, "the stream responder to finish")
}

// streamRow is one row of the transfer-stream path.
type streamRow struct {
	name     string
	bigReq   bool // a request above the limit: a claim check (WithClaimChecks, ServeClaimChecks)
	msg      bool // RequestMsgStream with a header of its own
	endless  bool // the responder writes until Write fails (use a small window)
	hold     bool // the responder waits for the release (after the call) or its ctx before writing
	noResp   bool // nobody serves the subject
	deadline time.Duration
	opts     []shim.StreamOption // StreamIdle(streamIdle) comes first
	fault    func(e *env, c *call, r *sresp)
	open     *wantErr // RequestStream's error; nil: the stream opens
	read     wantErr  // reading to the end; OutcomeOK: io.EOF after exactly the body
	orOK     bool     // the exact body and io.EOF, or read's error
	corrupt  bool     // bytes were changed in transit: no prefix check, only never io.EOF
	fnErr    error    // the handler returns it after writing the whole body: read's error comes after exactly the body
	closeAt  int      // (endless) the caller reads this many bytes, then closes the stream
	cancelAt int      // (endless) the caller reads this many bytes, cancels ctx and reads on
	openBy   time.Duration
	ran      int
	respErr  []error // the responder's Write must fail, its context's cause matching one of these
	left     int
	bug      string // a product bug makes the row fail: it is skipped with this message
}

func (row streamRow) subtest() (string, func(*testing.T)) { return row.name, row.run }

func (row streamRow) run(t *testing.T) {
	if row.bug != "" && os.Getenv("NATSSEND_MATRIX_BUGS") == "" {
		t.Skip("BUG: " + row.bug)
	}
	e := newEnv(t)
	r := &sresp{e: e, endless: row.endless, fnErr: row.fnErr, hold: row.hold, release: make(chan struct{}), opened: make(chan struct{})}
	t.Cleanup(r.releaseAll)
	t.Cleanup(r.markOpened)
	if !row.noResp {
		r.serve(t)
	}
	var copts []shim.Option
	if row.bigReq {
		copts = append(copts, shim.WithClaimChecks(e.cst))
	}
	client := shim.NewClient(e.caller, copts...)
	c := newCall(t, row.deadline)
	ctx := c.ctx
	c.after(r.releaseAll)
	if row.fault != nil {
		row.fault(e, c, r)
	}
	req := []byte("export")
	if row.bigReq {
		req = payload(bigSize, 1)
	}
	opts := append([]shim.StreamOption{shim.StreamIdle(streamIdle)}, row.opts...)
	start := time.Now()
	var rs *shim.ReplyStream
	var err error
	if row.msg {
		rs, err = client.RequestMsgStream(ctx, &nats.Msg{Subject: subject, Data: req, Header: nats.Header{"Trace": {"row"}}}, opts...)
	} else {
		rs, err = client.RequestStream(ctx, subject, req, opts...)
	}
	took := time.Since(start)
	r.markOpened()
	switch {
	case row.open != nil:
		t.Logf("open: %v", err)
		if err == nil {
			t.Errorf("RequestStream opened a stream; want an error")
			_ = rs.Close()
		} else {
			row.open.check(t, err)
		}
		if rs != nil && err != nil {
			t.Errorf("an error (%v) and a stream", err)
		}
	case err != nil:
		t.Errorf("RequestStream: %v", err)
	case row.closeAt > 0:
		row.readAndClose(t, rs, r)
	case row.cancelAt > 0:
		got := make([]byte, row.cancelAt)
		if _, err := io.ReadFull(rs, got); err != nil {
			t.Errorf("reading %d bytes: %v", row.cancelAt, err)
		}
		c.cancel()
		_, err := rs.Read(got)
		row.read.check(t, err)
		_ = rs.Close()
	default:
		row.readAll(t, rs)
	}
	if row.openBy > 0 && took > row.openBy {
		t.Errorf("RequestStream took %v; it must end within %v", took, row.openBy)
	}
	c.afterCall()
	if row.respErr != nil {
		natstest.Eventually(t, settle, func() bool { return r.werr.Load() != nil }, "the responder's Write to fail")
		werr, cause := *r.werr.Load(), *r.cause.Load()
		if o := shim.Classify(werr); o != shim.OutcomeUnknown {
			t.Errorf("the responder's Write error %v: Classify = %v, want %v", werr, o, shim.OutcomeUnknown)
		}
		if !isAny(cause, row.respErr) {
			t.Errorf("the responder's context cause = %v, want one of %v (Write: %v)", cause, row.respErr, werr)
		}
	}
	natstest.Eventually(t, settle, func() bool { return r.runs.Load() >= int64(row.ran) }, "the stream handler to run")
	r.settle(t)
	if n := int(r.runs.Load()); n != row.ran {
		t.Errorf("the handler ran %d times, want %d", n, row.ran)
	}
	e.checkLeft(row.left)
	e.checkFaults()
}

// readAll reads the stream to its end and checks the body or the error.
func (row streamRow) readAll(t *testing.T, rs *shim.ReplyStream) {
	t.Helper()
	defer rs.Close()
	body := payload(streamBody, 3)
	got, err := io.ReadAll(rs) // nil: io.EOF
	t.Logf("read %d bytes: %v", len(got), err)
	switch {
	case err == nil && !bytes.Equal(got, body):
		t.Errorf("io.EOF after %d bytes that are not the %d written", len(got), len(body))
		return
	case err == nil && row.read.outcome != shim.OutcomeOK && !row.orOK:
		t.Errorf("io.EOF after the whole body; want an error (%v)", row.read.outcome)
		return
	case err == nil:
		return
	case row.read.outcome == shim.OutcomeOK:
		t.Errorf("read %d bytes, then %v; want the whole body and io.EOF", len(got), err)
		return
	}
	row.read.check(t, err)
	if row.fnErr != nil && !bytes.Equal(got, body) {
		t.Errorf("%d bytes before the handler's error; want the whole %d-byte body first", len(got), len(body))
	}
	if !row.corrupt && !bytes.HasPrefix(body, got) {
		t.Errorf("the %d bytes returned before the error are not the bytes written", len(got))
	}
	if _, err2 := rs.Read(make([]byte, 1)); err2 == nil || err2 == io.EOF {
		t.Errorf("Read after the stream failed: %v; want its error again", err2)
	}
}

// readAndClose reads closeAt bytes, closes the stream and checks Read
// after Close.
func (row streamRow) readAndClose(t *testing.T, rs *shim.ReplyStream, r *sresp) {
	t.Helper()
	got := make([]byte, row.closeAt)
	if _, err := io.ReadFull(rs, got); err != nil {
		t.Errorf("reading %d bytes: %v", row.closeAt, err)
	}
	body := payload(streamBody, 3)
	for off := 0; off < len(got); off += len(body) {
		if n := min(len(body), len(got)-off); !bytes.Equal(got[off:off+n], body[:n]) {
			t.Errorf("bytes %d..%d are not the bytes written", off, off+n)
		}
	}
	closed := time.Now()
	if err := rs.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := rs.Read(make([]byte, 1)); !errors.Is(err, shim.ErrStreamClosed) {
		t.Errorf("Read after Close: %v; want ErrStreamClosed", err)
	}
	natstest.Eventually(t, settle, func() bool { return r.werr.Load() != nil }, "the responder's Write to fail after Close")
	t.Logf("the responder's Write failed %v after Close", time.Duration(r.failedAt.Load()-closed.UnixNano()))
}

// isAny reports whether errors.Is(err, t) for one of targets.
func isAny(err error, targets []error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}
