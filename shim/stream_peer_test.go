package shim_test

import (
	"crypto/sha256"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
)

// Raw nats.go peers that speak the stream protocol by hand
// (natstest.StreamFrame and friends), for the hostile-peer tests.

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

// rawStream is one stream served by a raw responder: the caller's inbox,
// the responder's control inbox and the control messages it received.
type rawStream struct {
	nc    *nats.Conn
	req   *nats.Msg
	ctrl  string
	mu    sync.Mutex
	ctl   [][]byte
	got   chan struct{} // a control message arrived (capacity 1)
	unsub func()
}

// send publishes a frame to the caller.
func (s *rawStream) send(kind byte, off int64, payload []byte) error {
	return s.nc.PublishMsg(&nats.Msg{Subject: s.req.Reply, Reply: s.ctrl, Data: natstest.StreamFrame(kind, off, payload)})
}

// end sends the end frame of body.
func (s *rawStream) end(body []byte) error {
	sum := sha256.Sum256(body)
	return s.send(natstest.StreamEnd, int64(len(body)), sum[:])
}

// waitCtl waits up to d for a control message that cond accepts.
func (s *rawStream) waitCtl(d time.Duration, cond func(b []byte) bool) bool {
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

// rawServe subscribes a raw responder on subject: every request gets a
// control inbox of its own and is handed to the test.
func rawServe(t testing.TB, nc *nats.Conn, subject string) <-chan *rawStream {
	t.Helper()
	ch := make(chan *rawStream, 16)
	_, err := nc.Subscribe(subject, func(m *nats.Msg) {
		s := &rawStream{nc: nc, req: m, ctrl: nc.NewInbox(), got: make(chan struct{}, 1)}
		sub, err := nc.Subscribe(s.ctrl, func(c *nats.Msg) {
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
			t.Error(err)
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
		t.Fatal(err)
	}
	return ch
}

// nextStream waits for the raw responder's next request.
func nextStream(t testing.TB, ch <-chan *rawStream) *rawStream {
	t.Helper()
	select {
	case s := <-ch:
		t.Cleanup(s.unsub)
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("the raw responder got no request")
		return nil
	}
}

// heapAfterGC is the live heap after a full collection.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// growth is how far heap is above base (0 when below).
func growth(heap, base uint64) int64 {
	if heap < base {
		return 0
	}
	return int64(heap - base)
}
