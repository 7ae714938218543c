package faultmatrix_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// behave is what a row's responder does.
type behave struct {
	reply  []byte                       // the reply body (small unless the row is about a large reply)
	block  bool                         // wait for the row's release (or the request's deadline) before replying
	work   time.Duration                // time the work takes (a responder's latency, not a test's wait)
	stuck  bool                         // wait for the row's release only, ignoring the deadline
	crash  bool                         // close the responder's connection instead of replying
	during func(ctx context.Context)    // runs in the handler, before it replies
	json   bool                         // JSONHandler instead of Handler
	plain  bool                         // no ServeClaimChecks
	fn     func(context.Context) []byte // computes the reply instead of reply
}

// handler counts what the responder did.
type handler struct {
	sub      *nats.Subscription
	mh       nats.MsgHandler
	nc       *nats.Conn
	release  chan struct{}
	once     sync.Once
	entered  atomic.Int64 // deliveries to the MsgHandler
	finished atomic.Int64
	mu       sync.Mutex
	ops      []string                                  // the operation ID of each run of the handler function
	during   atomic.Pointer[func(ctx context.Context)] // a fault's action inside the handler, once
	afters   []func()                                  // run once the MsgHandler returned (the reply sent or not)
	errs     []error                                   // what OnError reported
	replied  int                                       // requests the MsgHandler returned from
}

// inside makes the first run of the handler function call f before it
// replies.
func (h *handler) inside(f func(ctx context.Context)) {
	var once sync.Once
	g := func(ctx context.Context) { once.Do(func() { f(ctx) }) }
	h.during.Store(&g)
}

// afterReply runs f once the responder is done with the next request
// (its reply sent, or failed).
func (h *handler) afterReply(f func()) {
	h.mu.Lock()
	h.afters = append(h.afters, f)
	h.mu.Unlock()
}

// afterReplyOrNow is afterReply, or f at once when the responder is done
// with a request already.
func (h *handler) afterReplyOrNow(f func()) {
	h.mu.Lock()
	if h.replied > 0 {
		h.mu.Unlock()
		f()
		return
	}
	h.afters = append(h.afters, f)
	h.mu.Unlock()
}

// onErrors returns what OnError reported.
func (h *handler) onErrors() []error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]error(nil), h.errs...)
}

// runs returns how often the handler function ran and with which
// operation IDs.
func (h *handler) runs() (int, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.ops), append([]string(nil), h.ops...)
}

// prepare makes the row's responder on e.resp (see subscribe).
func (e *env) prepare(b behave) *handler {
	e.t.Helper()
	h := &handler{nc: e.resp, release: make(chan struct{})}
	e.h = h
	e.t.Cleanup(h.releaseAll)
	run := func(ctx context.Context) []byte {
		h.mu.Lock()
		h.ops = append(h.ops, shim.OperationIDFrom(ctx))
		h.mu.Unlock()
		if b.during != nil {
			b.during(ctx)
		}
		if f := h.during.Load(); f != nil {
			(*f)(ctx)
		}
		if b.work > 0 {
			select {
			case <-time.After(b.work):
			case <-ctx.Done():
			}
		}
		if b.block {
			select {
			case <-h.release:
			case <-ctx.Done():
			}
		}
		if b.stuck {
			<-h.release
		}
		if b.crash {
			e.resp.Close()
		}
		if b.fn != nil {
			return b.fn(ctx)
		}
		return b.reply
	}
	opts := []shim.HandlerOption{shim.Conn(e.resp)}
	if !b.plain {
		opts = append(opts, shim.ServeClaimChecks(e.rst))
	}
	opts = append(opts, shim.OnError(func(m *nats.Msg, err error) {
		h.mu.Lock()
		h.errs = append(h.errs, err)
		h.mu.Unlock()
	}))
	var mh nats.MsgHandler
	if b.json {
		mh = shim.JSONHandler(func(ctx context.Context, req map[string]any) ([]byte, error) {
			return run(ctx), nil // []byte encodes as base64 JSON
		}, opts...)
	} else {
		mh = shim.Handler(func(ctx context.Context, _ *nats.Msg) ([]byte, error) { return run(ctx), nil }, opts...)
	}
	h.mh = func(m *nats.Msg) {
		h.entered.Add(1)
		defer h.finished.Add(1)
		mh(m)
		h.mu.Lock()
		h.replied++
		fs := h.afters
		h.afters = nil
		h.mu.Unlock()
		for _, f := range fs {
			f()
		}
	}
	return h
}

// subscribe subscribes the responder. It may run in a proxy hook.
func (h *handler) subscribe(t *testing.T) {
	sub, err := h.nc.Subscribe(subject, h.mh)
	if err == nil {
		err = h.nc.Flush()
	}
	if err != nil {
		t.Error(err)
		return
	}
	h.mu.Lock()
	h.sub = sub
	h.mu.Unlock()
}

// releaseAll lets blocked handlers reply.
func (h *handler) releaseAll() { h.once.Do(func() { close(h.release) }) }

// settle waits until the responder is done with every request the server
// delivered to it: on a live connection a round trip brings in whatever
// was on its way, and then nothing may be pending or running.
func (h *handler) settle(t *testing.T) {
	t.Helper()
	if h.nc.IsConnected() {
		_ = h.nc.FlushTimeout(5 * time.Second)
	}
	natstest.Eventually(t, settle, func() bool {
		if h.nc.IsClosed() {
			return h.finished.Load() == h.entered.Load()
		}
		h.mu.Lock()
		sub := h.sub
		h.mu.Unlock()
		if sub == nil {
			return h.entered.Load() == 0
		}
		n, _, err := sub.Pending()
		d, derr := sub.Delivered()
		return err == nil && derr == nil && n == 0 && d == h.entered.Load() && h.finished.Load() == d
	}, "the responder to finish")
}
