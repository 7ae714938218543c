package stream

import (
	"context"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/outcome"
)

// A pair is one stream's two sides wired through a real nats-server: the
// caller's Receiver on one connection, the responder's Sender on another,
// as shim's RequestStream and StreamHandler set them up, without a Client.
type pair struct {
	t      *testing.T
	srv    *natstest.Server
	cnc    *nats.Conn // the caller's
	rnc    *nats.Conn // the responder's
	inbox  string     // the caller's
	ctrl   string     // the responder's control inbox
	r      *Receiver
	s      *Sender
	ctx    context.Context
	cancel context.CancelFunc
}

func connect(t *testing.T, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, nats.ReconnectBufSize(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// newPair wires a stream whose caller declared window and idle.
func newPair(t *testing.T, window int64, idle time.Duration) *pair {
	t.Helper()
	srv := natstest.Start(t)
	p := &pair{t: t, srv: srv, cnc: connect(t, srv.URL()), rnc: connect(t, srv.URL())}
	p.ctx, p.cancel = context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(p.cancel)
	p.inbox = p.cnc.NewInbox() + "." + rand.Text()
	p.ctrl = p.rnc.NewInbox() + "." + rand.Text()
	p.r = NewReceiver(p.ctx, p.cnc, window, idle)
	sub, err := p.cnc.Subscribe(p.inbox, p.r.OnMsg)
	if err != nil {
		t.Fatal(err)
	}
	p.r.SetSub(sub)
	if err := p.cnc.Flush(); err != nil { // the inbox's interest is the server's
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.r.Close() })
	sr, ok := ParseMarker(Marker(window, idle, 0))
	if !ok {
		t.Fatalf("the marker of window %d, idle %v does not parse", window, idle)
	}
	p.s = NewSender(p.ctx, connlimit.For(p.rnc), p.inbox, p.ctrl, sr, 0)
	return p
}

// noReply is Finish's reply for a stream that started: never called.
func (p *pair) noReply(code, msg string, _ bool) error {
	p.t.Errorf("an ordinary reply (%s: %s) for a stream that started", code, msg)
	return nil
}

// serve writes body in writes of chunk bytes and ends the stream; the
// channel gets Finish's error.
func (p *pair) serve(body []byte, chunk int) <-chan error {
	done := make(chan error, 1)
	go func() {
		for rest := body; len(rest) > 0; {
			n := min(chunk, len(rest))
			if _, err := p.s.Write(rest[:n]); err != nil {
				done <- errors.Join(err, p.s.Finish(err, p.noReply))
				return
			}
			rest = rest[n:]
		}
		done <- p.s.Finish(nil, p.noReply)
	}()
	return done
}

// open waits for the first frame and starts the caller's side.
func (p *pair) open() {
	p.t.Helper()
	select {
	case <-p.r.Started():
	case <-time.After(30 * time.Second):
		p.t.Fatal("no first frame")
	}
	if err := p.r.Begin(); err != nil {
		p.t.Fatalf("the stream did not start: %v", err)
	}
}

// wait returns what serve's channel got.
func wait(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatal("the responder did not end")
		return nil
	}
}

// broken checks that err is a broken stream (STREAM_BROKEN, may have run,
// io.ErrUnexpectedEOF) caused by cause.
func broken(t *testing.T, err, cause error) {
	t.Helper()
	var e *outcome.Error
	if !errors.Is(err, cause) || !errors.As(err, &e) || e.Code != outcome.CodeStreamBroken || outcome.Classify(err) != outcome.Unknown {
		t.Fatalf("got %v; want a STREAM_BROKEN error (outcome unknown) caused by %v", err, cause)
	}
}

// random returns n random bytes.
func random(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}
