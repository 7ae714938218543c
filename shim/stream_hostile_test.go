package shim_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/internal/xfer"
	"github.com/natssend/natssend/shim"
)

// slack is what a side may hold beyond its window: frames in flight, the
// frame being filled, a few reusable frame buffers, the test's own noise.
const slack = 4 << 20

// checkBroken checks err is a broken stream caused by the peer breaking
// the protocol.
func checkBroken(t *testing.T, err error) {
	t.Helper()
	var e *shim.Error
	if !errors.As(err, &e) || e.Code != shim.CodeStreamBroken || !errors.Is(err, io.ErrUnexpectedEOF) ||
		!errors.Is(err, shim.ErrStreamProtocol) || shim.Classify(err) != shim.OutcomeUnknown {
		t.Fatalf("got %v; want STREAM_BROKEN, ErrStreamProtocol, io.ErrUnexpectedEOF, OutcomeUnknown", err)
	}
}

// A responder that sends far beyond the credit it was given: the caller
// holds at most its window (plus a frame or two) and breaks the stream.
func TestStreamResponderBeyondCredit(t *testing.T) {
	s := natstest.Start(t)
	peers := natstest.RawServe(t, rawConn(t, s.URL()), "flood")
	c := shim.NewClient(connect(t, s.URL()))
	const window, frame, total = 256 << 10, 64 << 10, 48 << 20
	base := natstest.HeapAfterGC()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rs, p := openRawStream(ctx, t, c, peers, "flood", shim.StreamWindow(window), shim.StreamIdle(20*time.Second))
	defer rs.Close()
	chunk := bytes.Repeat([]byte{7}, frame)
	for off := 0; off < total; off += frame {
		if err := p.Send(xfer.Data, int64(off), chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.NC.Flush(); err != nil {
		t.Fatal(err)
	}
	// The caller took it all in (it acknowledged the whole flood) or
	// broke the stream (it cancelled).
	if !p.WaitCtl(20*time.Second, func(b []byte) bool {
		if b[0] == xfer.Cancel {
			return true
		}
		k, recv, _, ok := xfer.ParseFrame(b)
		return ok && k == xfer.Ack && recv >= total
	}) {
		t.Fatal("the caller neither acknowledged the flood nor cancelled the stream")
	}
	if g := natstest.Growth(natstest.HeapAfterGC(), base); g > window+slack {
		t.Errorf("the caller's heap grew by %d bytes for a %d-byte window", g, window)
	}
	got, err := io.ReadAll(rs)
	if len(got) > window {
		t.Errorf("read %d bytes, beyond the %d-byte window the caller granted", len(got), window)
	}
	checkBroken(t, err)
}

// A caller that grants more credit than the window it declared: the
// responder keeps at most that window of unacknowledged frames and breaks
// the stream; the handler's Write fails and its context ends.
func TestStreamCallerGrantBeyondWindow(t *testing.T) {
	s := natstest.Start(t)
	const window, total, chunk = 64 << 10, 48 << 20, 32 << 10
	var (
		werr    error
		cause   error
		written int
		grown   int64
		done    = make(chan struct{})
	)
	var base uint64
	serveStream(t, s.URL(), "big", func(ctx context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		defer close(done)
		buf := bytes.Repeat([]byte{3}, chunk)
		for written < total {
			n, err := w.Write(buf)
			written += n
			if err != nil {
				werr, cause = err, context.Cause(ctx)
				break
			}
		}
		grown = natstest.Growth(natstest.HeapAfterGC(), base)
		return werr
	})
	raw := rawConn(t, s.URL())
	inbox := raw.NewInbox()
	var once sync.Once
	sub, err := raw.Subscribe(inbox, func(m *nats.Msg) {
		once.Do(func() { _ = raw.Publish(m.Reply, xfer.AckBody(0, 1<<40, false)) })
	})
	if err != nil {
		t.Fatal(err)
	}
	base = natstest.HeapAfterGC()
	req := &nats.Msg{Subject: "big", Reply: inbox, Header: nats.Header{natstest.StreamHeader: {natstest.StreamMarker(window, 20*time.Second)}}}
	if err := raw.PublishMsg(req); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the handler is still writing")
	}
	_ = sub.Unsubscribe()
	if grown > window+slack {
		t.Errorf("the responder's heap grew by %d bytes for a %d-byte window (%d bytes written)", grown, window, written)
	}
	checkBroken(t, werr)
	if !errors.Is(cause, shim.ErrStreamProtocol) {
		t.Errorf("the handler's context cause = %v; want ErrStreamProtocol", cause)
	}
}

// The responder's wait for the caller's final acknowledgement has a bound
// that keepalives do not extend.
func TestStreamEndAckNotExtendedByKeepalives(t *testing.T) {
	s := natstest.Start(t)
	nc := connect(t, s.URL())
	body := payload(10_000, 4)
	returned := make(chan time.Time, 1)
	fnDone := make(chan time.Time, 1)
	mh := shim.StreamHandler(func(ctx context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		_, err := w.Write(body)
		fnDone <- time.Now()
		return err
	}, shim.Conn(nc))
	if _, err := nc.Subscribe("tail", func(m *nats.Msg) { mh(m); returned <- time.Now() }); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	subs := nc.NumSubscriptions()
	const idle = time.Second
	raw := rawConn(t, s.URL())
	inbox := raw.NewInbox()
	var ctrl atomic.Value
	var recv, ended atomic.Int64
	if _, err := raw.Subscribe(inbox, func(m *nats.Msg) {
		ctrl.Store(m.Reply)
		k, off, p, ok := xfer.ParseFrame(m.Data)
		switch {
		case !ok:
		case k == xfer.Data && off == recv.Load():
			recv.Add(int64(len(p)))
		case k == xfer.End:
			ended.Store(1)
		}
	}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // keepalives every 20 ms, never the final flag
		tk := time.NewTicker(20 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
			}
			if c, _ := ctrl.Load().(string); c != "" {
				r := recv.Load()
				_ = raw.Publish(c, xfer.AckBody(r, r+1<<20, false))
			}
		}
	}()
	req := &nats.Msg{Subject: "tail", Reply: inbox, Header: nats.Header{natstest.StreamHeader: {natstest.StreamMarker(1<<20, idle)}}}
	if err := raw.PublishMsg(req); err != nil {
		t.Fatal(err)
	}
	var fnAt time.Time
	select {
	case fnAt = <-fnDone:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not run")
	}
	select {
	case at := <-returned:
		t.Logf("the handler's adapter returned %v after fn (idle %v)", at.Sub(fnAt), idle)
	case <-time.After(10 * time.Second):
		t.Fatal("the responder still waits for a final acknowledgement 10 s after its end, kept alive by keepalives")
	}
	if ended.Load() != 1 || recv.Load() != int64(len(body)) {
		t.Errorf("the raw caller got %d bytes, end %v", recv.Load(), ended.Load() == 1)
	}
	natstest.Eventually(t, 5*time.Second, func() bool { return nc.NumSubscriptions() == subs }, "the control subscription to go")
}

// End, error and heartbeat frames inconsistent with what was delivered,
// frames beyond the credit, forged and unknown frames fail the stream at
// once; duplicates and overlaps of honest resends do not.
func TestStreamInconsistentFrames(t *testing.T) {
	s := natstest.Start(t)
	peers := natstest.RawServe(t, rawConn(t, s.URL()), "forge")
	c := shim.NewClient(connect(t, s.URL()))
	const window = 64 << 10
	body := payload(3000, 5)
	data := func(p *natstest.RawStream, from, to int) error {
		return p.Send(xfer.Data, int64(from), body[from:to])
	}
	for _, tc := range []struct {
		name  string
		frame func(p *natstest.RawStream) error // after data [0, 1000)
		ok    bool                              // the stream still ends well (the end frame follows)
	}{
		{"end below what was delivered", func(p *natstest.RawStream) error { return p.End(body[:500]) }, false},
		{"error frame below what was delivered", func(p *natstest.RawStream) error {
			return p.NC.PublishMsg(&nats.Msg{Subject: p.Req.Reply, Reply: p.Ctrl, Data: xfer.Frame(xfer.Error, 500, nil),
				Header: nats.Header{"Nats-Service-Error-Code": {"500"}, "Nats-Service-Error": {"x"}}})
		}, false},
		{"heartbeat below what was delivered", func(p *natstest.RawStream) error { return p.Send(xfer.Heartbeat, 500, []byte{0}) }, false},
		{"data beyond the credit", func(p *natstest.RawStream) error { return p.Send(xfer.Data, window, []byte{1}) }, false},
		{"data straddling the credit", func(p *natstest.RawStream) error {
			return p.Send(xfer.Data, 1000, make([]byte, window))
		}, false},
		{"end beyond the credit", func(p *natstest.RawStream) error { return p.Send(xfer.End, 2*window, make([]byte, 32)) }, false},
		{"heartbeat beyond the credit", func(p *natstest.RawStream) error { return p.Send(xfer.Heartbeat, 2*window, []byte{0}) }, false},
		{"start frame at an offset", func(p *natstest.RawStream) error { return p.Send(xfer.Start, 1000, []byte{1}) }, false},
		{"frame of no known kind", func(p *natstest.RawStream) error { return p.Send('Z', 1000, nil) }, false},
		{"end with a short digest", func(p *natstest.RawStream) error { return p.Send(xfer.End, 1000, []byte{1, 2}) }, false},
		{"duplicate and overlapping data", func(p *natstest.RawStream) error {
			for _, r := range [][2]int{{0, 1000}, {0, 500}, {500, 2000}, {1500, 3000}, {0, 3000}} {
				if err := data(p, r[0], r[1]); err != nil {
					return err
				}
			}
			return p.End(body)
		}, true},
		{"duplicate start frame", func(p *natstest.RawStream) error {
			if err := p.Send(xfer.Start, 0, []byte{1}); err != nil {
				return err
			}
			if err := data(p, 1000, 3000); err != nil {
				return err
			}
			return p.End(body)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			rs, p := openRawStream(ctx, t, c, peers, "forge", shim.StreamWindow(window), shim.StreamIdle(20*time.Second))
			defer rs.Close()
			if err := data(p, 0, 1000); err != nil {
				t.Fatal(err)
			}
			if err := tc.frame(p); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			got, err := io.ReadAll(rs)
			took := time.Since(start)
			if tc.ok {
				if err != nil || !bytes.Equal(got, body) {
					t.Fatalf("read %d bytes, %v; want the %d-byte body and io.EOF", len(got), err, len(body))
				}
				return
			}
			if !bytes.HasPrefix(body, got) || len(got) > 1000 {
				t.Errorf("read %d bytes that are not the 1000 delivered", len(got))
			}
			checkBroken(t, err)
			if took > 5*time.Second {
				t.Errorf("the stream failed after %v; want at once (the idle bound is 20 s)", took)
			}
			if !p.WaitCtl(10*time.Second, func(b []byte) bool { return b[0] == xfer.Cancel }) {
				t.Error("the responder was not told (no cancel)")
			}
		})
	}
}

// openRawStream opens a stream on subject, served by the raw responder
// that peers yields, which sends its start frame (SHA-256).
func openRawStream(ctx context.Context, t *testing.T, c *shim.Client, peers <-chan *natstest.RawStream, subject string, opts ...shim.StreamOption) (*shim.ReplyStream, *natstest.RawStream) {
	t.Helper()
	rs, p, err := startRawStream(ctx, t, c, peers, subject, []byte{1}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return rs, p
}

// startRawStream is openRawStream with the start frame's payload given
// and RequestStream's error returned.
func startRawStream(ctx context.Context, t *testing.T, c *shim.Client, peers <-chan *natstest.RawStream, subject string, start []byte, opts ...shim.StreamOption) (*shim.ReplyStream, *natstest.RawStream, error) {
	t.Helper()
	type opened struct {
		rs  *shim.ReplyStream
		err error
	}
	op := make(chan opened, 1)
	go func() {
		rs, err := c.RequestStream(ctx, subject, nil, opts...)
		op <- opened{rs, err}
	}()
	p := natstest.NextStream(t, peers)
	if err := p.Send(xfer.Start, 0, start); err != nil {
		t.Fatal(err)
	}
	o := <-op
	return o.rs, p, o.err
}

// rawConn is a plain nats.go connection, as a peer that does not use
// natssend has.
func rawConn(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// TestStreamStartFrameVersion: a start frame naming another protocol
// version than the caller's fails the opening with ErrStreamProtocol,
// naming the version; one without a version (a responder before the
// version byte) or with the caller's opens the stream.
func TestStreamStartFrameVersion(t *testing.T) {
	s := natstest.Start(t)
	peers := natstest.RawServe(t, rawConn(t, s.URL()), "versions")
	c := shim.NewClient(connect(t, s.URL()))
	for _, tc := range []struct {
		start []byte
		ok    bool
	}{{nil, true}, {[]byte{1}, true}, {[]byte{2}, false}, {[]byte{0, xfer.DigestSHA256}, false}} {
		t.Run(fmt.Sprintf("%v", tc.start), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			rs, p, err := startRawStream(ctx, t, c, peers, "versions", tc.start)
			defer p.Close()
			if tc.ok {
				if err != nil {
					t.Fatalf("start frame %v: %v", tc.start, err)
				}
				_ = rs.Close()
				return
			}
			if !errors.Is(err, shim.ErrStreamProtocol) || !strings.Contains(err.Error(), fmt.Sprintf("version %d", tc.start[0])) {
				t.Fatalf("start frame %v: %v, want ErrStreamProtocol naming the version", tc.start, err)
			}
		})
	}
}
