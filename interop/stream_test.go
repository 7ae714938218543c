package interop_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/shim"
)

const streamSize = 64 << 20

// handled is how a shim stream handler's call ended.
type handled struct {
	err, cause error
}

// serveGoStream serves stream.go: the pattern body of the size the
// request names, in 1 MiB writes.
func serveGoStream(t *testing.T, nc *nats.Conn) <-chan handled {
	t.Helper()
	done := make(chan handled, 4)
	fn := func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
		n, err := strconv.Atoi(string(req.Data))
		if err != nil {
			return shim.InvalidArgument("size %q", req.Data)
		}
		body := pattern(n, 0)
		for off := 0; off < n && err == nil; off += 1 << 20 {
			_, err = w.Write(body[off:min(n, off+1<<20)])
		}
		done <- handled{err, context.Cause(ctx)}
		return err
	}
	if _, err := shim.Serve(nc, "stream.go", shim.Stream(fn)); err != nil {
		t.Fatal(err)
	}
	return done
}

// TestJSReadsShimStream: a nats.js caller (lib/stream.js, from the spec)
// reads 64 MiB from a shim StreamHandler with an 8 MiB window, losing
// two data frames on the way (the responder sends them again when asked)
// and checking the SHA-256 end digest (it offers no other); it breaks
// on a frame beyond its credit from a hand-made responder and tells it
// (C); a shim responder breaks on its forged credit.
func TestJSReadsShimStream(t *testing.T) {
	requireInterop(t)
	s, nc, _ := server(t)
	handlers := serveGoStream(t, nc)

	p := runPeer(t, "stream-read", s.URL())
	var res struct {
		Sha256        string
		Size, Resends int
		Lost          int
		DigestByte    *int
	}
	p.wait(&res)
	want := sha256.Sum256(pattern(streamSize, 0))
	if res.Size != streamSize || res.Sha256 != hexOf(want[:]) {
		t.Fatalf("nats.js read %d bytes (%s), want %d", res.Size, res.Sha256, streamSize)
	}
	if res.Lost != 2 || res.Resends < 1 {
		t.Fatalf("lost %d frames, asked for resends %d times: the loss was not exercised", res.Lost, res.Resends)
	}
	if res.DigestByte != nil && *res.DigestByte != 0 {
		t.Fatalf("start frame named digest %d for a caller that offered SHA-256 only", *res.DigestByte)
	}
	if h := <-handlers; h.err != nil {
		t.Fatalf("the shim handler: %v", h.err)
	}

	// A hand-made responder that sends beyond the credit.
	ctl := make(chan *nats.Msg, 16)
	if _, err := nc.Subscribe("stream.go.forged", func(m *nats.Msg) {
		inbox := nc.NewInbox()
		if _, err := nc.ChanSubscribe(inbox, ctl); err != nil {
			t.Error(err)
			return
		}
		pub := func(kind byte, off int64, payload []byte) {
			b := make([]byte, 9+len(payload))
			b[0] = kind
			binary.BigEndian.PutUint64(b[1:9], uint64(off))
			copy(b[9:], payload)
			_ = nc.PublishMsg(&nats.Msg{Subject: m.Reply, Reply: inbox, Data: b}) //natssend:reviewed a hand-made stream responder
		}
		pub('S', 0, []byte{1})
		pub('D', 1<<20, []byte("0123456789")) // the caller granted 1 MiB
	}); err != nil {
		t.Fatal(err)
	}
	p = runPeer(t, "stream-forged", s.URL())
	var forged struct{ Error, Message string }
	p.wait(&forged)
	if forged.Error != "STREAM_BROKEN" {
		t.Fatalf("nats.js took a frame beyond its credit: %+v", forged)
	}
	for {
		select {
		case m := <-ctl:
			if len(m.Data) == 1 && m.Data[0] == 'C' {
				goto cancelled
			}
		case <-time.After(10 * time.Second):
			t.Fatal("nats.js did not cancel the stream it broke")
		}
	}
cancelled:

	// A nats.js caller that grants beyond the window it declared: the
	// shim responder breaks the stream (ErrStreamProtocol).
	p = runPeer(t, "stream-forge-ctl", s.URL())
	p.wait(nil)
	select {
	case h := <-handlers:
		if !errors.Is(h.cause, shim.ErrStreamProtocol) {
			t.Fatalf("the shim handler's cause: %v (%v), want ErrStreamProtocol", h.cause, h.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the shim handler did not end")
	}
}

// TestShimReadsJSStream: a shim Client reads streams from nats.js
// responders written from the spec: 64 MiB with an 8 MiB window, two
// frames lost by the responder (the Client asks again), SHA-256 chosen
// although the Client offers hw256, the responder's headers; an error
// frame after 1 MiB; an error reply before the start; a frame beyond the
// credit (ErrStreamProtocol); and a nats.js responder breaks on a forged
// credit from a hand-made caller.
func TestShimReadsJSStream(t *testing.T) {
	requireInterop(t)
	s, nc, _ := server(t)
	results := make(chan map[string]any, 16)
	if _, err := nc.Subscribe("interop.results", func(m *nats.Msg) { //natssend:reviewed the peer's JSON reports, never claim checks
		var r map[string]any
		_ = json.Unmarshal(m.Data, &r)
		results <- r
	}); err != nil {
		t.Fatal(err)
	}
	p := runPeer(t, "stream-serve", s.URL())
	ctx := ctxT(t, 3*time.Minute)
	c := shim.NewClient(nc, shim.WithTimeout(2*time.Minute))
	report := func(name string) map[string]any {
		t.Helper()
		for {
			select {
			case r := <-results:
				if r["name"] == name {
					return r
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("no report from nats.js's %s", name)
			}
		}
	}

	rs, err := c.RequestStream(ctx, "stream.js", []byte(strconv.Itoa(streamSize)), shim.StreamWindow(8<<20))
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	n, err := io.Copy(h, rs)
	want := sha256.Sum256(pattern(streamSize, 0))
	if err != nil || n != streamSize || hexOf(h.Sum(nil)) != hexOf(want[:]) {
		t.Fatalf("read %d bytes of nats.js's stream: %v (digest match %v)", n, err, hexOf(h.Sum(nil)) == hexOf(want[:]))
	}
	if rs.Header().Get("Interop-Size") != strconv.Itoa(streamSize) {
		t.Fatalf("the responder's headers: %v", rs.Header())
	}
	if r := report("stream.js"); r["ok"] != true {
		t.Fatalf("nats.js's responder: %v", r)
	}
	// A small one with the default window.
	rs, err = c.RequestStream(ctx, "stream.js", []byte("1000"))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(rs); err != nil || string(b) != string(pattern(1000, 0)) {
		t.Fatalf("a 1000-byte stream: %d bytes, %v", len(b), err)
	}
	report("stream.js")

	// An error frame after 1 MiB.
	rs, err = c.RequestStream(ctx, "stream.js.fail", nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err = io.Copy(io.Discard, rs)
	var e *shim.Error
	if n != 1<<20 || !errors.As(err, &e) || e.Code != shim.CodeInternal || shim.Classify(err) != shim.OutcomeUnknown {
		t.Fatalf("error frame: %d bytes, %v; want 1 MiB then INTERNAL (unknown)", n, err)
	}
	// An error reply before the start.
	if _, err = c.RequestStream(ctx, "stream.js.early", nil); !errors.As(err, &e) || e.Code != shim.CodeInvalidArgument || shim.Classify(err) != shim.OutcomeRejected {
		t.Fatalf("an error before the start: %v, want INVALID_ARGUMENT (rejected)", err)
	}
	// A frame beyond the credit.
	rs, err = c.RequestStream(ctx, "stream.js.forged", nil, shim.StreamWindow(1<<20))
	if err == nil {
		_, err = io.Copy(io.Discard, rs)
	}
	if !errors.Is(err, shim.ErrStreamProtocol) {
		t.Fatalf("a frame beyond the credit: %v, want ErrStreamProtocol", err)
	}

	// A hand-made caller that grants beyond its window: nats.js breaks.
	inbox := nc.NewInbox()
	frames := make(chan *nats.Msg, 64)
	if _, err := nc.ChanSubscribe(inbox, frames); err != nil {
		t.Fatal(err)
	}
	req := &nats.Msg{Subject: "stream.js.slow", Reply: inbox, Header: nats.Header{shim.HeaderStream: {"1 1048576 5000"}}}
	if err := nc.PublishMsg(req); err != nil { //natssend:reviewed a hand-made stream caller
		t.Fatal(err)
	}
	start := <-frames
	if len(start.Data) < 9 || start.Data[0] != 'S' || start.Reply == "" {
		t.Fatalf("first frame %q", start.Data)
	}
	ack := make([]byte, 18)
	ack[0] = 'A'
	binary.BigEndian.PutUint64(ack[9:17], 1<<20+1)
	if err := nc.Publish(start.Reply, ack); err != nil { //natssend:reviewed a forged acknowledgement
		t.Fatal(err)
	}
	if r := report("stream.js.slow"); r["error"] != "STREAM_BROKEN" {
		t.Fatalf("nats.js's responder after a forged credit: %v, want STREAM_BROKEN", r)
	}
	if err := nc.Publish("interop.done", nil); err != nil { //natssend:reviewed test control message
		t.Fatal(err)
	}
	var end struct{ Lost int }
	p.wait(&end)
	if end.Lost != 2 {
		t.Fatalf("nats.js's responder lost %d frames, want 2: the resend was not exercised", end.Lost)
	}
}

func hexOf(b []byte) string { return hex.EncodeToString(b) }
