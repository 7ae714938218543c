package faultmatrix_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/internal/xfer"
	"github.com/natssend/natssend/shim"
)

// rawCaller is a caller that speaks the stream protocol by hand to a
// StreamHandler: it learns the control inbox from the first frame, tracks
// what arrived in order, and sends what its row tells it to.
type rawCaller struct {
	nc     *nats.Conn
	window int64
	mu     sync.Mutex
	ctrl   string
	recv   int64
	ended  bool
}

func (c *rawCaller) send(b []byte) {
	if c.ctrl != "" {
		_ = c.nc.Publish(c.ctrl, b) //natssend:reviewed a raw peer speaking the stream protocol by hand; its frames are small
	}
}

// ack acknowledges what arrived and grants the window past it (a reader
// that reads at once).
func (c *rawCaller) ack(final bool) {
	c.send(xfer.AckBody(c.recv, c.recv+c.window, final))
}

// take records a frame in order (data and the end).
func (c *rawCaller) take(kind byte, off int64, payload []byte) {
	switch {
	case kind == xfer.Data && off == c.recv:
		c.recv += int64(len(payload))
	case kind == xfer.End && off == c.recv:
		c.ended = true
	}
}

// honest is an honest caller's answer to a frame: an ack, final at the end.
func honest(c *rawCaller, kind byte, off int64, payload []byte) {
	c.take(kind, off, payload)
	if kind == xfer.Data || kind == xfer.End {
		c.ack(c.ended)
	}
}

// respRow is a row in which a raw caller speaks to a StreamHandler.
type respRow struct {
	name    string
	window  int64         // the declared window; 0: hostileWindow
	idle    time.Duration // the declared idle bound; 0: hostileIdle
	timeout time.Duration // HeaderTimeout; 0: none
	body    int           // what the handler writes; 0: 256 KiB
	// onFrame answers each frame (nil: honest); keep runs every beatGap
	// while the row runs (keepalives), with c.mu held for both.
	onFrame func(c *rawCaller, kind byte, off int64, payload []byte)
	keep    func(c *rawCaller)
	write   wantErr       // the handler's Write error; OutcomeOK: none
	cause   []error       // the handler's context cause once it is over, one of these; nil: none
	finish  []error       // OnError's errors from the adapter's end must match one of these; nil: none
	within  time.Duration // the adapter returns within this of the request; 0: atOnce
}

func (row respRow) subtest() (string, func(*testing.T)) { return row.name, row.run }

func (row respRow) run(t *testing.T) {
	s := natstest.Start(t, natstest.MaxPayload(limit)) // frames of 16 KiB: Write waits for credit

	resp := dial(t, s.URL())
	window, idle, size := cmp0(row.window, hostileWindow), cmp0(row.idle, hostileIdle), cmp0(row.body, 256<<10)
	var (
		mu        sync.Mutex
		werr      error
		cause     error
		finishErr []error
		grown     int64
		base      baseline
	)
	returned := make(chan time.Time, 1)
	mh := shim.StreamHandler(func(ctx context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		chunk := bytes.Repeat([]byte{5}, 4<<10)
		var err error
		for n := 0; n < size && err == nil; n += len(chunk) {
			_, err = w.Write(chunk[:min(len(chunk), size-n)])
		}
		g := natstest.Growth(natstest.HeapAfterGC(), base.heap)
		mu.Lock()
		werr, grown = err, g
		mu.Unlock()
		if err == nil {
			return nil
		}
		select { // the context ends with the Write failure's cause
		case <-ctx.Done():
		case <-time.After(settle):
		}
		mu.Lock()
		cause = context.Cause(ctx)
		mu.Unlock()
		return err
	}, shim.Conn(resp), shim.OnError(func(_ *nats.Msg, err error) {
		mu.Lock()
		finishErr = append(finishErr, err)
		mu.Unlock()
	}))
	if _, err := resp.Subscribe(subject, func(m *nats.Msg) { mh(m); returned <- time.Now() }); err != nil {
		t.Fatal(err)
	}
	if err := resp.Flush(); err != nil {
		t.Fatal(err)
	}
	raw := rawDial(t, s.URL())
	c := &rawCaller{nc: raw, window: window}
	inbox := raw.NewInbox()
	on := row.onFrame
	if on == nil {
		on = honest
	}
	_, err := raw.Subscribe(inbox, func(m *nats.Msg) {
		kind, off, payload, ok := xfer.ParseFrame(m.Data)
		if !ok {
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.ctrl == "" {
			c.ctrl = m.Reply
		}
		on(c, kind, off, payload)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Flush(); err != nil {
		t.Fatal(err)
	}
	base = takeBaseline(s, resp)
	stop := make(chan struct{})
	if row.keep != nil {
		every(stop, func() { c.mu.Lock(); row.keep(c); c.mu.Unlock() })
	}
	h := nats.Header{natstest.StreamHeader: {natstest.StreamMarker(window, idle)}}
	if row.timeout > 0 {
		h[shim.HeaderTimeout] = []string{strconv.FormatInt(row.timeout.Milliseconds(), 10)}
	}
	start := time.Now()
	if err := raw.PublishMsg(&nats.Msg{Subject: subject, Reply: inbox, Header: h}); err != nil { //natssend:reviewed a raw peer speaking the stream protocol by hand; its frames are small
		t.Fatal(err)
	}
	bound := cmp0(row.within, atOnce)
	select {
	case at := <-returned:
		t.Logf("the handler's adapter returned %v after the request", at.Sub(start))
	case <-time.After(bound + settle):
		t.Fatalf("the handler's adapter has not returned %v after the request; the bound is %v", bound+settle, bound)
	}
	if took := time.Since(start); took > bound {
		t.Errorf("the handler's adapter returned %v after the request; the bound is %v", took, bound)
	}
	close(stop)
	mu.Lock()
	defer mu.Unlock()
	t.Logf("Write: %v; cause: %v; OnError: %v", werr, cause, finishErr)
	if grown > window+hostileSlack {
		t.Errorf("the responder's heap grew by %d bytes; the bound is the %d-byte window + %d", grown, window, hostileSlack)
	}
	if row.write.outcome == shim.OutcomeOK {
		if werr != nil {
			t.Errorf("Write: %v; want every write to succeed", werr)
		}
		c.mu.Lock()
		if c.recv != int64(size) || (row.finish == nil && !c.ended) {
			t.Errorf("the caller got %d bytes in order (end frame: %v); want all %d", c.recv, c.ended, size)
		}
		c.mu.Unlock()
	} else {
		row.write.check(t, werr)
	}
	if row.cause != nil && !isAny(cause, row.cause) {
		t.Errorf("the handler's context cause = %v; want one of %v", cause, row.cause)
	}
	for _, err := range finishErr {
		if !isAny(err, row.finish) && !sameCode(err, werr) {
			t.Errorf("OnError: %v; want one of %v", err, row.finish)
		}
	}
	if row.finish != nil && len(finishErr) == 0 {
		t.Errorf("OnError was not called; want one of %v", row.finish)
	}
	base.checkBack(t)
}

// sameCode reports whether a and b are *shim.Errors of the same code: the
// adapter reports the Write failure again as the stream's end.
func sameCode(a, b error) bool {
	var ea, eb *shim.Error
	return errors.As(a, &ea) && errors.As(b, &eb) && ea.Code == eb.Code
}
