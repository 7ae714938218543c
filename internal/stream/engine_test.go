package stream

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/internal/xfer"
)

// A body many times the caller's window arrives whole and in order, under
// flow control (the responder never sends past the credit: the caller
// would break the stream), and its digest (HighwayHash-256, which the
// caller offered) matches.
func TestTransferManyWindows(t *testing.T) {
	const window = 256 << 10
	p := newPair(t, window, 10*time.Second)
	body := random(3<<20 + 12345) // 12 windows and a bit
	done := p.serve(body, 100_000)
	p.open()
	got, err := io.ReadAll(p.r)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read %d bytes (%v); want the %d written", len(got), err, len(body))
	}
	if err := wait(t, done); err != nil {
		t.Fatalf("the responder ended with %v", err)
	}
	p.r.mu.Lock()
	digest, maxGrant := p.r.digest, p.r.maxGrant
	p.r.mu.Unlock()
	if digest != xfer.DigestHighway {
		t.Errorf("digest %s; want %s", xfer.DigestName(digest), xfer.DigestName(xfer.DigestHighway))
	}
	if maxGrant < int64(len(body)) {
		t.Errorf("the caller granted up to %d; the body of %d bytes needed more", maxGrant, len(body))
	}
	if sent, _ := p.s.Stats(); sent != int64(len(body)) {
		t.Errorf("the responder sent %d bytes; want %d", sent, len(body))
	}
}

// A data frame lost in transit is asked for again (a resend request from
// what arrived in order) and sent again: the body arrives whole.
func TestLostFrameResent(t *testing.T) {
	p := newPair(t, 256<<10, 10*time.Second)
	var dropped atomic.Int64
	dropped.Store(-1)
	SetDropHook(func(kind byte, off int64) bool {
		return kind == xfer.Data && off > 0 && dropped.CompareAndSwap(-1, off)
	})
	defer SetDropHook(nil)
	before := Resends()
	body := random(1 << 20)
	done := p.serve(body, 64<<10)
	p.open()
	got, err := io.ReadAll(p.r)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read %d bytes (%v); want the %d written", len(got), err, len(body))
	}
	if err := wait(t, done); err != nil {
		t.Fatalf("the responder ended with %v", err)
	}
	if dropped.Load() < 0 || Resends() == before {
		t.Fatalf("dropped the frame at %d, %d resend requests; want one frame dropped and asked for again", dropped.Load(), Resends()-before)
	}
}

// A frame forged with the responder's control subject as its reply (so
// the caller takes it for the responder's) and past the credit the caller
// granted breaks the stream at once: the reader gets ErrProtocol, and the
// responder is told why (its context's cause is ErrProtocol, Write
// fails).
func TestForgedFrameBreaks(t *testing.T) {
	const window = 256 << 10
	p := newPair(t, window, 10*time.Second)
	if err := p.s.Flush(); err != nil { // the start frame
		t.Fatal(err)
	}
	p.open()
	forger := connect(t, p.srv.URL())
	if err := forger.PublishMsg(&nats.Msg{Subject: p.inbox, Reply: p.ctrl, Data: xfer.Frame(xfer.Data, 2*window, []byte("x"))}); err != nil { //natssend:reviewed a test peer's raw frame
		t.Fatal(err)
	}
	_, err := io.ReadAll(p.r)
	broken(t, err, ErrProtocol)
	select {
	case <-p.s.Context().Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the responder was not told")
	}
	if cause := context.Cause(p.s.Context()); cause != ErrProtocol {
		t.Fatalf("the responder's context ended with %v; want ErrProtocol", cause)
	}
	if _, err := p.s.Write([]byte("more")); err == nil {
		t.Fatal("Write after the break succeeded")
	}
	_ = p.s.Finish(nil, p.noReply)
}

// A frame from another subject than the stream's responder (a second
// responder) is told to stop and otherwise ignored: the stream goes on.
func TestSecondResponderIgnored(t *testing.T) {
	p := newPair(t, 256<<10, 10*time.Second)
	if err := p.s.Flush(); err != nil {
		t.Fatal(err)
	}
	p.open()
	forger := connect(t, p.srv.URL())
	other := forger.NewInbox()
	told := make(chan []byte, 1)
	if _, err := forger.Subscribe(other, func(m *nats.Msg) { told <- m.Data }); err != nil {
		t.Fatal(err)
	}
	if err := forger.PublishMsg(&nats.Msg{Subject: p.inbox, Reply: other, Data: xfer.Frame(xfer.Data, 0, []byte("forged"))}); err != nil { //natssend:reviewed a test peer's raw frame
		t.Fatal(err)
	}
	select {
	case b := <-told:
		if !bytes.Equal(b, xfer.CancelBody(false)) {
			t.Fatalf("the second responder got %q; want a cancel", b)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the second responder was not told to stop")
	}
	body := random(100_000)
	done := p.serve(body, len(body))
	if got, err := io.ReadAll(p.r); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read %d bytes (%v); want the %d written", len(got), err, len(body))
	}
	if err := wait(t, done); err != nil {
		t.Fatalf("the responder ended with %v", err)
	}
}

// An end frame whose digest does not match the bytes received ends the
// stream with ErrCorrupt, not io.EOF.
func TestEndDigestMismatch(t *testing.T) {
	p := newPair(t, 256<<10, 10*time.Second)
	if _, err := p.s.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := p.s.Flush(); err != nil {
		t.Fatal(err)
	}
	p.open()
	natstest.Eventually(t, 30*time.Second, func() bool {
		p.r.mu.Lock()
		defer p.r.mu.Unlock()
		return p.r.recv == 5
	}, "the 5 bytes")
	forger := connect(t, p.srv.URL())
	if err := forger.PublishMsg(&nats.Msg{Subject: p.inbox, Reply: p.ctrl, Data: xfer.Frame(xfer.End, 5, make([]byte, 32))}); err != nil { //natssend:reviewed a test peer's raw frame
		t.Fatal(err)
	}
	got, err := io.ReadAll(p.r)
	if string(got) != "hello" {
		t.Fatalf("read %q; want the bytes before the end", got)
	}
	broken(t, err, ErrCorrupt)
	// The responder is told that its stream broke, not that it was closed.
	natstest.Eventually(t, 10*time.Second, func() bool { return errors.Is(context.Cause(p.s.Context()), ErrProtocol) }, "the responder's context to end with ErrProtocol")
	p.cancel()
	_ = p.s.Finish(nil, p.noReply)
}

// A caller that closes the stream before its end sends a plain cancel
// (no reason byte): the responder's context ends with ErrCanceled, not
// ErrProtocol, and its Write fails.
func TestCloseCancels(t *testing.T) {
	p := newPair(t, 256<<10, 10*time.Second)
	if err := p.s.Flush(); err != nil {
		t.Fatal(err)
	}
	p.open()
	if err := p.r.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.s.Context().Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the responder was not told")
	}
	if cause := context.Cause(p.s.Context()); cause != ErrCanceled {
		t.Fatalf("the responder's context ended with %v; want ErrCanceled", cause)
	}
	if _, err := p.s.Write(make([]byte, 1<<20)); !errors.Is(err, ErrCanceled) {
		t.Fatalf("Write after the cancel: %v; want ErrCanceled", err)
	}
	if _, err := p.r.Read(make([]byte, 1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Read after Close: %v; want ErrClosed", err)
	}
	_ = p.s.Finish(nil, p.noReply)
}

// Bytes corrupted on the way (here a peer's data frame that arrived before
// the responder's own at the same offset) make the responder's genuine end
// frame's digest mismatch: the caller fails with ErrCorrupt and, instead
// of the final acknowledgement that would let the responder report
// success, cancels with the broken reason, so the responder's Finish says
// the stream broke.
func TestCorruptedBytesResponderLearns(t *testing.T) {
	p := newPair(t, 256<<10, 10*time.Second)
	if err := p.s.Flush(); err != nil { // the start frame alone
		t.Fatal(err)
	}
	p.open()
	forger := connect(t, p.srv.URL())
	if err := forger.PublishMsg(&nats.Msg{Subject: p.inbox, Reply: p.ctrl, Data: xfer.Frame(xfer.Data, 0, []byte("HELLO"))}); err != nil { //natssend:reviewed a test peer's raw frame
		t.Fatal(err)
	}
	natstest.Eventually(t, 30*time.Second, func() bool {
		p.r.mu.Lock()
		defer p.r.mu.Unlock()
		return p.r.recv == 5
	}, "the forged 5 bytes")
	done := p.serve([]byte("hello"), 5)
	got, err := io.ReadAll(p.r)
	if string(got) != "HELLO" {
		t.Fatalf("read %q; want what arrived first", got)
	}
	broken(t, err, ErrCorrupt)
	if ferr := wait(t, done); !errors.Is(ferr, ErrProtocol) {
		t.Fatalf("the responder's Finish: %v; want the stream broken (ErrProtocol), not success", ferr)
	}
}
