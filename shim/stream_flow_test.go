package shim_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// frameSnoop records the size the server counts (MsgSize) of every frame
// of kind sent to a caller's inbox.
type frameSnoop struct {
	mu    sync.Mutex
	sizes map[byte][]int
}

func snoopFrames(t *testing.T, url string) *frameSnoop {
	t.Helper()
	f := &frameSnoop{sizes: map[byte][]int{}}
	nc := connect(t, url)
	if _, err := nc.Subscribe("_INBOX.>", func(m *nats.Msg) {
		if m.Reply != "" && len(m.Data) >= shim.FramePrefix {
			f.mu.Lock()
			f.sizes[m.Data[0]] = append(f.sizes[m.Data[0]], shim.MsgSize(m))
			f.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *frameSnoop) take(kind byte, n int) []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.sizes[kind]) < n {
		return nil
	}
	got := f.sizes[kind]
	f.sizes = map[byte][]int{}
	return got
}

func TestStreamFrameBoundaries(t *testing.T) {
	const limit = 1024
	s := natstest.Start(t, natstest.MaxPayload(limit))
	snoop := snoopFrames(t, s.URL())
	var pad atomic.Int64
	bodies := make(chan []byte, 1)
	serveStream(t, s.URL(), "frames", func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
		if n := pad.Load(); n > 0 {
			w.Header().Set("X-Pad", strings.Repeat("p", int(n)))
		}
		_, err := w.Write(<-bodies)
		return err
	})
	c := shim.NewClient(connect(t, s.URL()))
	full := limit - shim.FramePrefix // payload bytes of a full data frame
	for _, tc := range []struct {
		size  int
		sizes []int
	}{
		{3 * full, []int{limit, limit, limit}},
		{3*full + 1, []int{limit, limit, limit, shim.FramePrefix + 1}},
		{full - 1, []int{limit - 1}},
	} {
		body := payload(tc.size, uint64(tc.size))
		bodies <- body
		rs, err := c.RequestStream(context.Background(), "frames", nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAll(t, rs)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("%d bytes: got %d, %v", tc.size, len(got), err)
		}
		var sizes []int
		natstest.Eventually(t, 5*time.Second, func() bool { sizes = snoop.take(shim.FrameData, len(tc.sizes)); return sizes != nil }, "the data frames")
		if len(sizes) != len(tc.sizes) {
			t.Fatalf("%d bytes: frames %v, want %v", tc.size, sizes, tc.sizes)
		}
		for i := range sizes {
			if sizes[i] != tc.sizes[i] {
				t.Fatalf("%d bytes: frames %v, want %v", tc.size, sizes, tc.sizes)
			}
		}
	}

	// The start frame carries the headers: the header block counts, to
	// the byte. Its payload: the version and the digest's kind.
	startSize := func(n int) int {
		return shim.HeaderSize(nats.Header{"X-Pad": {strings.Repeat("p", n)}}) + shim.FramePrefix + 2
	}
	n := 1
	for startSize(n) < limit {
		n++
	}
	pad.Store(int64(n))
	bodies <- []byte("fits")
	rs, err := c.RequestStream(context.Background(), "frames", nil)
	if err != nil {
		t.Fatalf("start frame of exactly %d bytes: %v", startSize(n), err)
	}
	if got, err := readAll(t, rs); string(got) != "fits" || err != nil || len(rs.Header().Get("X-Pad")) != n {
		t.Fatalf("%q, %v", got, err)
	}
	pad.Store(int64(n + 1))
	bodies <- []byte("too large")
	rs, err = c.RequestStream(context.Background(), "frames", nil)
	var e *shim.Error
	if rs != nil || !errors.As(err, &e) || !e.Remote || !errors.Is(err, shim.ErrPayloadTooLarge) {
		t.Fatalf("start frame of %d bytes: %v, %v", startSize(n+1), rs, err)
	}
}

func TestStreamFlowControl(t *testing.T) {
	const limit, window, size = 8 << 10, 64 << 10, 2 << 20
	s := natstest.Start(t, natstest.MaxPayload(limit))
	var slow atomic.Int64
	noSlow := nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { slow.Add(1) })
	body := payload(size, 9)
	var written atomic.Int64
	rnc := connect(t, s.URL(), noSlow)
	if _, err := rnc.Subscribe("flow", shim.StreamHandler(func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
		for off := 0; off < size; off += 1000 {
			n, err := w.Write(body[off:min(off+1000, size)])
			written.Add(int64(n))
			if err != nil {
				return err
			}
		}
		return nil
	}, shim.Conn(rnc))); err != nil {
		t.Fatal(err)
	}
	_ = rnc.Flush()
	c := shim.NewClient(connect(t, s.URL(), noSlow))
	rs, err := c.RequestStream(context.Background(), "flow", nil, shim.StreamWindow(window), shim.Timeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var got bytes.Buffer
	buf := make([]byte, 4096)
	maxAhead := int64(0)
	for i := 0; ; i++ {
		if i%16 == 0 {
			time.Sleep(2 * time.Millisecond) // a slow reader
		}
		n, err := rs.Read(buf)
		got.Write(buf[:n])
		ahead := written.Load() - int64(got.Len())
		maxAhead = max(maxAhead, ahead)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got.Bytes(), body) {
		t.Fatalf("got %d bytes, want %d", got.Len(), size)
	}
	// The writer is at most the window, the frame being filled and one
	// frame of overshoot ahead of the reader.
	if bound := int64(window + 2*limit + 1000); maxAhead > bound {
		t.Errorf("the writer got %d bytes ahead of the reader, bound %d", maxAhead, bound)
	}
	if maxAhead < window/2 {
		t.Errorf("the writer was at most %d bytes ahead: the window of %d was not used", maxAhead, window)
	}
	if slow.Load() != 0 {
		t.Errorf("%d asynchronous errors (slow consumer?)", slow.Load())
	}
}

func TestStreamFrameLossRecovery(t *testing.T) {
	s := natstest.Start(t, natstest.MaxPayload(16<<10))
	body := payload(1<<20, 5)
	serveStream(t, s.URL(), "lossy", writeAll(body, 7000))
	c := shim.NewClient(connect(t, s.URL()))
	frame := int64(16<<10 - shim.FramePrefix)
	var mu sync.Mutex
	dropped := map[[2]int64]bool{}
	drop := func(kind byte, off int64) bool {
		mu.Lock()
		defer mu.Unlock()
		key := [2]int64{int64(kind), off}
		lose := kind == shim.FrameStart || kind == shim.FrameEnd ||
			(kind == shim.FrameData && (off == 3*frame || off == 4*frame || off == 40*frame || off+frame >= int64(len(body))))
		if lose && !dropped[key] {
			dropped[key] = true
			return true
		}
		return false
	}
	shim.SetStreamDropHook(drop)
	t.Cleanup(func() { shim.SetStreamDropHook(nil) })
	rs, err := c.RequestStream(context.Background(), "lossy", nil, shim.StreamIdle(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, rs)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("got %d bytes (%v), want %d", len(got), err, len(body))
	}
	mu.Lock()
	n := len(dropped)
	mu.Unlock()
	if n != 6 {
		t.Errorf("dropped %d frames, want 6 (start, 4 data, end)", n)
	}
}

func TestStreamUnrecoverableLoss(t *testing.T) {
	s := natstest.Start(t, natstest.MaxPayload(16<<10))
	body := payload(1<<20, 6)
	serveStream(t, s.URL(), "lost", writeAll(body, 7000))
	c := shim.NewClient(connect(t, s.URL()))
	const cut = 100_000
	shim.SetStreamDropHook(func(kind byte, off int64) bool { return kind != shim.FrameHeartbeat && off >= cut })
	t.Cleanup(func() { shim.SetStreamDropHook(nil) })
	rs, err := c.RequestStream(context.Background(), "lost", nil, shim.StreamIdle(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, rs)
	if !errors.Is(err, io.ErrUnexpectedEOF) || (!errors.Is(err, shim.ErrStreamLost) && !errors.Is(err, shim.ErrStreamIdle)) || shim.Classify(err) != shim.OutcomeUnknown {
		t.Fatalf("err %v", err)
	}
	if len(got) > cut+16<<10 || !bytes.Equal(got, body[:len(got)]) {
		t.Fatalf("got %d bytes, not a prefix of the body up to the frame at %d", len(got), cut)
	}
}
