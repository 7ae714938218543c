package shim_test

import (
	"context"
	"io"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/internal/xfer"
	"github.com/natssend/natssend/shim"
)

// varyingBits is what an observer of subjects learns of the next one:
// with the prefix and suffix every subject shares taken off, the sum over
// the positions of the rest of log2(how many different bytes that
// position showed). A counter shows few values in its high positions
// (nats.go's NUID inboxes go up by small steps; a base-36 counter's top
// digits stay), a random token all of its alphabet in each. It also
// reports whether every subject was different.
func varyingBits(subjects []string) (float64, bool) {
	if len(subjects) < 2 {
		return 0, false
	}
	pre, suf := subjects[0], subjects[0]
	seen := map[string]bool{}
	for _, s := range subjects {
		for !strings.HasPrefix(s, pre) {
			pre = pre[:len(pre)-1]
		}
		for !strings.HasSuffix(s, suf) {
			suf = suf[1:]
		}
		seen[s] = true
	}
	var bits float64
	for i := len(pre); ; i++ {
		values := map[byte]bool{}
		for _, s := range subjects {
			if i < len(s)-len(suf) {
				values[s[i]] = true
			}
		}
		if len(values) == 0 {
			break
		}
		bits += math.Log2(float64(len(values)))
	}
	return bits, len(seen) == len(subjects)
}

// TestReplySubjectsUnguessable: the reply subjects of a Client's calls
// (Request, Request with Attempts, RequestMany, RequestStream), as the
// responder sees them, and a stream responder's control inbox, as its
// caller sees it, are all different and share no counter: each
// carries at least 64 bits that no earlier subject tells (measured over
// 256 calls of each kind: every position of the varying part takes on
// most of its alphabet).
func TestReplySubjectsUnguessable(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	var mu sync.Mutex
	seen := map[string][]string{}
	srv := connect(t, s.URL())
	for _, kind := range []string{"request", "attempts", "many"} {
		if _, err := shim.Serve(srv, "svc."+kind, shim.Unary(func(_ context.Context, m *nats.Msg) ([]byte, error) {
			mu.Lock()
			seen[kind] = append(seen[kind], m.Reply)
			mu.Unlock()
			return []byte("ok"), nil
		})); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := shim.Serve(srv, "svc.stream", shim.Stream(func(_ context.Context, m *nats.Msg, w *shim.StreamWriter) error {
		mu.Lock()
		seen["stream"] = append(seen["stream"], m.Reply)
		mu.Unlock()
		_, err := w.Write([]byte("ok"))
		return err
	})); err != nil {
		t.Fatal(err)
	}
	if err := srv.Flush(); err != nil {
		t.Fatal(err)
	}
	c := shim.NewClient(connect(t, s.URL()), shim.WithTimeout(10*time.Second))
	ctx := context.Background()
	const n = 256
	for i := range n {
		if _, err := c.Request(ctx, "svc.request", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Request(ctx, "svc.attempts", nil, shim.Attempts(2), shim.OperationID("op"+string(rune('a'+i%26)))); err != nil {
			t.Fatal(err)
		}
		for _, err := range c.RequestMany(ctx, "svc.many", nil, shim.MaxReplies(1)) {
			if err != nil {
				t.Fatal(err)
			}
		}
		rs, err := c.RequestStream(ctx, "svc.stream", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAll(rs); err != nil {
			t.Fatal(err)
		}
	}
	// The stream responder's control inbox, as a caller sees it: the
	// reply subject of the frames (a raw caller, so that the test sees
	// the wire).
	raw := rawConn(t, s.URL())
	for range n / 4 {
		sub, err := raw.SubscribeSync(raw.NewInbox())
		if err != nil {
			t.Fatal(err)
		}
		req := &nats.Msg{Subject: "svc.stream", Reply: sub.Subject, Header: nats.Header{natstest.StreamHeader: {natstest.StreamMarker(1<<16, time.Second)}}}
		if err := raw.PublishMsg(req); err != nil { //natssend:reviewed a raw stream caller
			t.Fatal(err)
		}
		m, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		seen["control"] = append(seen["control"], m.Reply)
		_ = raw.Publish(m.Reply, []byte{xfer.Cancel}) //natssend:reviewed the stream's end, told to its responder
		_ = sub.Unsubscribe()
	}
	mu.Lock()
	defer mu.Unlock()
	seen["stream"] = seen["stream"][:n] // the raw streams' requests came after
	want := map[string]int{"control": n / 4}
	for _, kind := range []string{"request", "attempts", "many", "stream", "control"} {
		subjects := seen[kind]
		if w, ok := want[kind]; (ok && len(subjects) != w) || (!ok && len(subjects) != n) {
			t.Errorf("%s: %d subjects seen", kind, len(subjects))
			continue
		}
		bits, distinct := varyingBits(subjects)
		t.Logf("%s: %q: %.1f bits vary", kind, subjects[0], bits)
		if !distinct || bits < 64 {
			t.Errorf("%s: reply subjects %q, %q, ...: %.1f bits vary between them (distinct: %v); want every one different and at least 64 bits", kind, subjects[0], subjects[1], bits, distinct)
		}
	}
}

// TestVaryingBits checks the measure itself: a counter and nats.go's
// NUID inboxes fall short, random tokens do not.
func TestVaryingBits(t *testing.T) {
	var counter, nuids []string
	for i := range 256 {
		counter = append(counter, "_INBOX.abc."+strings.Repeat("0", 3)+string(rune('a'+i%26))+string(rune('a'+i/26)))
		nuids = append(nuids, nats.NewInbox())
	}
	for name, subjects := range map[string][]string{"counter": counter, "NUID": nuids} {
		if bits, _ := varyingBits(subjects); bits >= 64 {
			t.Errorf("%s: %.1f bits, want fewer than 64", name, bits)
		}
	}
}
