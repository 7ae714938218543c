package faultmatrix_test

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/internal/xfer"
	"github.com/natssend/natssend/shim"
)

// The hostile-peer rows: a raw nats.go peer speaks the stream protocol by
// hand (xfer.Frame, RawServe) to the natssend side under test.
// Every row states the error and outcome, the time within which it
// surfaces, and that the heap (after GC) grew by at most the window plus
// hostileSlack while the stream was held, and that goroutines and
// subscriptions are back to their baseline afterwards. The rows run one
// at a time, outside the parallel groups, so that the heap they measure
// is theirs.

const (
	hostileWindow = 64 << 10
	hostileSlack  = 4 << 20          // frames in flight, the frame being filled, reusable frame buffers
	hostileIdle   = 20 * time.Second // rows that must not end by the idle bound
	atOnce        = 3 * time.Second  // "at once": far below the idle bound
	beatGap       = 20 * time.Millisecond
	delivered     = 1000 // every caller row's responder first sends the start frame and data [0, delivered)
)

var (
	hostileBody    = payload(3000, 5)
	streamProtocol = wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeStreamBroken, is: []error{io.ErrUnexpectedEOF, shim.ErrStreamProtocol}, sent: yes}
)

// baseline is what must come back once a row's stream is over.
type baseline struct {
	s          *natstest.Server
	ncs        []*nats.Conn // the natssend side's connections
	ncSubs     []int
	heap       uint64
	goroutines int
	srvSubs    uint32
}

func takeBaseline(s *natstest.Server, ncs ...*nats.Conn) baseline {
	b := baseline{s: s, ncs: ncs, heap: natstest.HeapAfterGC(), goroutines: runtime.NumGoroutine(), srvSubs: s.Server().NumSubscriptions()}
	for _, nc := range ncs {
		b.ncSubs = append(b.ncSubs, nc.NumSubscriptions())
	}
	return b
}

// checkHeap fails the row when the heap grew beyond window plus the slack.
func (b baseline) checkHeap(t *testing.T, window int) {
	t.Helper()
	if g := natstest.Growth(natstest.HeapAfterGC(), b.heap); g > int64(window+hostileSlack) {
		t.Errorf("the heap grew by %d bytes while the stream was held; the bound is the %d-byte window + %d", g, window, hostileSlack)
	}
}

// checkBack waits for goroutines and subscriptions to come back.
func (b baseline) checkBack(t *testing.T) {
	t.Helper()
	natstest.Eventually(t, settle, func() bool {
		for i, nc := range b.ncs {
			if nc.NumSubscriptions() != b.ncSubs[i] {
				return false
			}
		}
		return b.s.Server().NumSubscriptions() == b.srvSubs
	}, "the subscriptions to be back to their baseline")
	natstest.Eventually(t, settle, func() bool { return runtime.NumGoroutine() <= b.goroutines }, "the goroutines to be back to their baseline")
}

// rawDial is a plain nats.go connection: a peer that does not use natssend.
func rawDial(t *testing.T, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url) //natssend:reviewed a raw peer that does not use natssend, by design
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// every runs f every beatGap until stop is closed.
func every(stop <-chan struct{}, f func()) {
	go func() {
		tk := time.NewTicker(beatGap)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				f()
			}
		}
	}()
}

// callerRow is a row in which a raw responder speaks to
// Client.RequestStream.
type callerRow struct {
	name     string
	window   int           // StreamWindow; 0: hostileWindow
	idle     time.Duration // StreamIdle; 0: hostileIdle
	timeout  time.Duration // Timeout (the wait for the first frame); 0: the Client's
	deadline time.Duration // the call's context; 0: long
	noStart  bool          // act drives the stream from the request on
	// act is the responder's hostile part, after the start frame and data
	// [0, delivered) (unless noStart); stop ends what it left running.
	act    func(p *natstest.RawStream, stop <-chan struct{}) error
	open   *wantErr      // RequestStream's error; nil: it opens
	read   wantErr       // OutcomeOK: hostileBody and io.EOF
	within time.Duration // the error surfaces within this after act returned
	told   bool          // the responder gets a cancel
}

func (row callerRow) subtest() (string, func(*testing.T)) { return row.name, row.run }

func (row callerRow) run(t *testing.T) {
	s := natstest.Start(t)
	caller := dial(t, s.URL())
	peers := natstest.RawServe(t, rawDial(t, s.URL()), subject)
	window, idle := cmp0(row.window, hostileWindow), cmp0(row.idle, hostileIdle)
	opts := []shim.StreamOption{shim.StreamWindow(window), shim.StreamIdle(idle)}
	if row.timeout > 0 {
		opts = append(opts, shim.Timeout(row.timeout))
	}
	base := takeBaseline(s, caller)
	ctx, cancel := context.WithTimeout(context.Background(), cmp0(row.deadline, long))
	defer cancel()
	type opened struct {
		rs  *shim.ReplyStream
		err error
	}
	res := make(chan opened, 1)
	go func() {
		rs, err := shim.NewClient(caller).RequestStream(ctx, subject, []byte("export"), opts...)
		res <- opened{rs, err}
	}()
	p := natstest.NextStream(t, peers)
	stop := make(chan struct{})
	defer func() {
		close(stop)
		p.Close()
		base.checkBack(t)
	}()
	if !row.noStart {
		if err := p.Send(xfer.Start, 0, []byte{1}); err != nil {
			t.Fatal(err)
		}
	}
	var acted time.Time
	var o opened
	if row.noStart {
		if err := row.act(p, stop); err != nil {
			t.Fatal(err)
		}
		acted = time.Now()
	}
	o = <-res
	if row.open != nil || o.err != nil {
		row.checkOpen(t, o.err, time.Since(acted))
		if o.rs != nil {
			_ = o.rs.Close()
		}
		return
	}
	defer o.rs.Close()
	if err := p.Send(xfer.Data, 0, hostileBody[:delivered]); err != nil {
		t.Fatal(err)
	}
	if err := row.act(p, stop); err != nil {
		t.Fatal(err)
	}
	if err := p.NC.Flush(); err != nil {
		t.Fatal(err)
	}
	acted = time.Now()
	got, err := io.ReadAll(o.rs)
	took := time.Since(acted)
	t.Logf("read %d bytes, then %v, %v after the responder's last act", len(got), err, took)
	base.checkHeap(t, window)
	switch {
	case row.read.outcome == shim.OutcomeOK:
		if err != nil || !bytes.Equal(got, hostileBody) {
			t.Errorf("read %d bytes, %v; want the %d-byte body and io.EOF", len(got), err, len(hostileBody))
		}
		return
	case err == nil:
		t.Errorf("io.EOF after %d bytes; want %v", len(got), row.read.code)
		return
	}
	row.read.check(t, err)
	if n := min(len(got), delivered); len(got) > window || !bytes.Equal(got[:n], hostileBody[:n]) {
		t.Errorf("%d bytes before the error: beyond the window or not the bytes delivered", len(got))
	}
	if row.within > 0 && took > row.within {
		t.Errorf("the error surfaced %v after the responder's last act; the bound is %v", took, row.within)
	}
	if row.told && !p.WaitCtl(settle, natstest.Canceled) {
		t.Error("the responder was not told (no cancel)")
	}
}

func (row callerRow) checkOpen(t *testing.T, err error, took time.Duration) {
	t.Helper()
	if row.open == nil {
		t.Fatalf("RequestStream: %v", err)
	}
	if err == nil {
		t.Fatal("RequestStream opened a stream; want an error")
	}
	row.open.check(t, err)
	if row.within > 0 && took > row.within {
		t.Errorf("RequestStream failed after %v; the bound is %v", took, row.within)
	}
}

// cmp0 is v, or def when v is zero.
func cmp0[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
