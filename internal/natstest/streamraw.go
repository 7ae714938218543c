package natstest

import (
	"crypto/sha256"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/xfer"
)

// RawStream is one stream request taken by a raw responder (RawServe):
// the request (its Reply is the caller's inbox), the responder's control
// inbox, and every control message the caller sent to it.
type RawStream struct {
	NC   *nats.Conn
	Req  *nats.Msg
	Ctrl string

	mu    sync.Mutex
	ctl   [][]byte
	got   chan struct{} // a control message arrived (capacity 1)
	unsub func()
}

// Send publishes a frame to the caller, with the control inbox as its
// reply subject.
func (s *RawStream) Send(kind byte, off int64, payload []byte) error {
	return s.SendMsg(kind, off, payload, nil)
}

// SendMsg is Send with headers (an error frame's micro error headers).
func (s *RawStream) SendMsg(kind byte, off int64, payload []byte, h nats.Header) error {
	return s.NC.PublishMsg(&nats.Msg{Subject: s.Req.Reply, Reply: s.Ctrl, Header: h, Data: xfer.Frame(kind, off, payload)}) //natssend:reviewed a raw peer speaking the stream protocol by hand; its frames are small
}

// End sends the end frame of body (its length and SHA-256).
func (s *RawStream) End(body []byte) error {
	sum := sha256.Sum256(body)
	return s.Send(xfer.End, int64(len(body)), sum[:])
}

// WaitCtl waits up to d for a control message that cond accepts (among
// all received so far and those to come).
func (s *RawStream) WaitCtl(d time.Duration, cond func(b []byte) bool) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	seen := 0
	for {
		s.mu.Lock()
		for ; seen < len(s.ctl); seen++ {
			if cond(s.ctl[seen]) {
				s.mu.Unlock()
				return true
			}
		}
		s.mu.Unlock()
		select {
		case <-s.got:
		case <-deadline.C:
			return false
		}
	}
}

// Close unsubscribes the control inbox.
func (s *RawStream) Close() {
	if s.unsub != nil {
		s.unsub()
	}
}

// Canceled matches the caller's cancel (for WaitCtl).
func Canceled(b []byte) bool { return len(b) > 0 && b[0] == xfer.Cancel }

// RawServe subscribes a raw responder on subject: every request gets a
// control inbox of its own (subscribed before the request is handed
// over) and is handed to the test; the control inbox is unsubscribed when
// tb ends.
func RawServe(tb testing.TB, nc *nats.Conn, subject string) <-chan *RawStream {
	tb.Helper()
	ch := make(chan *RawStream, 16)
	_, err := nc.Subscribe(subject, func(m *nats.Msg) {
		s := &RawStream{NC: nc, Req: m, Ctrl: nc.NewInbox(), got: make(chan struct{}, 1)}
		sub, err := nc.Subscribe(s.Ctrl, func(c *nats.Msg) {
			s.mu.Lock()
			if len(s.ctl) < 1<<16 {
				s.ctl = append(s.ctl, append([]byte(nil), c.Data...))
			}
			s.mu.Unlock()
			select {
			case s.got <- struct{}{}:
			default:
			}
		})
		if err != nil {
			tb.Error(err)
			return
		}
		s.unsub = func() { _ = sub.Unsubscribe() }
		_ = nc.Flush()
		ch <- s
	})
	if err == nil {
		err = nc.Flush()
	}
	if err != nil {
		tb.Fatal(err)
	}
	return ch
}

// NextStream waits for a raw responder's next request.
func NextStream(tb testing.TB, ch <-chan *RawStream) *RawStream {
	tb.Helper()
	select {
	case s := <-ch:
		tb.Cleanup(s.Close)
		return s
	case <-time.After(10 * time.Second):
		tb.Fatal("the raw responder got no request")
		return nil
	}
}

// HeapAfterGC is the live heap after a full collection.
func HeapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// Growth is how far heap is above base (0 when below).
func Growth(heap, base uint64) int64 {
	if heap < base {
		return 0
	}
	return int64(heap - base)
}
