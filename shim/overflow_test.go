package shim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

const overflowLimit = 64 << 10

// overflowEnv is a 64 KiB server with JetStream, a caller connection and a
// responder connection, each with a claim-check Store on the same bucket.
type overflowEnv struct {
	s          *natstest.Server
	nc, rnc    *nats.Conn
	cst, rst   *claimcheck.Store
	tap        *tap
	bucketName string
}

func newOverflowEnv(t testing.TB) *overflowEnv {
	t.Helper()
	s := natstest.Start(t, natstest.MaxPayload(overflowLimit), natstest.JetStream())
	e := &overflowEnv{s: s, nc: connect(t, s.URL()), rnc: connect(t, s.URL()), bucketName: claimcheck.DefaultBucket}
	e.cst = newStore(t, e.nc)
	e.rst = newStore(t, e.rnc)
	e.tap = newTap(t, connect(t, s.URL()), "svc", "_INBOX.>")
	return e
}

func newStore(t testing.TB, nc *nats.Conn) *claimcheck.Store {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := claimcheck.New(context.Background(), js, claimcheck.WithStorage(jetstream.MemoryStorage), claimcheck.WithTTL(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// stored is the number of messages (chunks and meta) in the bucket's
// stream: 0 when every payload was deleted and no chunk was left behind.
func (e *overflowEnv) stored(t testing.TB) uint64 {
	t.Helper()
	js, _ := jetstream.New(e.nc)
	str, err := js.Stream(context.Background(), "OBJ_"+e.bucketName)
	if err != nil {
		t.Fatal(err)
	}
	info, err := str.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// serveHandler subscribes h on "svc" on the responder connection.
func (e *overflowEnv) serveHandler(t testing.TB, h nats.MsgHandler) {
	t.Helper()
	if _, err := e.rnc.Subscribe("svc", h); err != nil {
		t.Fatal(err)
	}
	if err := e.rnc.Flush(); err != nil {
		t.Fatal(err)
	}
}

// tap records, on a connection of its own, the messages on its subjects:
// whether each was a claim check, and its logical size (the body, or the
// declared size of a claim check).
type tap struct {
	mu   sync.Mutex
	seen []tapped
	nc   *nats.Conn
}

type tapped struct {
	subject string
	claim   bool
	size    int
}

func newTap(t testing.TB, nc *nats.Conn, subjects ...string) *tap {
	t.Helper()
	tp := &tap{nc: nc}
	for _, s := range subjects {
		if _, err := nc.Subscribe(s, func(m *nats.Msg) {
			r := tapped{subject: m.Subject, claim: claimcheck.IsClaimCheck(m), size: len(m.Data)}
			if r.claim {
				r.size, _ = strconv.Atoi(m.Header.Get(claimcheck.HeaderSize))
			}
			tp.mu.Lock()
			tp.seen = append(tp.seen, r)
			tp.mu.Unlock()
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return tp
}

// count returns how many messages of logical size n on subjects with the
// given prefix were claim checks and how many plain, and forgets them all.
func (tp *tap) count(t testing.TB, prefix string, n int) (claim, plain int) {
	t.Helper()
	_ = tp.nc.Flush()
	time.Sleep(20 * time.Millisecond)
	tp.mu.Lock()
	defer tp.mu.Unlock()
	for _, r := range tp.seen {
		if r.size == n && len(r.subject) >= len(prefix) && r.subject[:len(prefix)] == prefix {
			if r.claim {
				claim++
			} else {
				plain++
			}
		}
	}
	tp.seen = nil
	return claim, plain
}

func (tp *tap) on(prefix string) int {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	n := 0
	for _, r := range tp.seen {
		if len(r.subject) >= len(prefix) && r.subject[:len(prefix)] == prefix {
			n++
		}
	}
	return n
}

func payload(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// sizedResponder answers every request with payload(n) where n is the
// decimal request header "Want", and records what it received.
type sizedResponder struct {
	mu   sync.Mutex
	runs int
	got  []byte
	hdr  nats.Header
}

func (r *sizedResponder) fn(_ context.Context, m *nats.Msg) ([]byte, error) {
	r.mu.Lock()
	r.runs++
	r.got = append([]byte(nil), m.Data...)
	r.hdr = m.Header
	r.mu.Unlock()
	n, _ := strconv.Atoi(m.Header.Get("Want"))
	return payload(n, 2), nil
}

func (r *sizedResponder) state() (int, []byte, nats.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs, r.got, r.hdr
}

func TestOverflowRoundTrips(t *testing.T) {
	e := newOverflowEnv(t)
	resp := &sizedResponder{}
	e.serveHandler(t, shim.Handler(resp.fn, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc)))
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst), shim.WithTimeout(30*time.Second))
	cases := []struct {
		name     string
		req, rep int
	}{
		{"request 10x", 10 * overflowLimit, 100},
		{"reply 10x", 100, 10 * overflowLimit},
		{"both 10x", 10 * overflowLimit, 10 * overflowLimit},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := payload(tc.req, uint64(i)+10)
			m := &nats.Msg{Subject: "svc", Data: body, Header: nats.Header{"Want": {strconv.Itoa(tc.rep)}}}
			reply, err := c.RequestMsg(context.Background(), m)
			if err != nil {
				t.Fatal(err)
			}
			runs, got, hdr := resp.state()
			if runs != i+1 {
				t.Fatalf("responder ran %d times in all, want %d", runs, i+1)
			}
			if !bytes.Equal(got, body) {
				t.Fatalf("responder got %d bytes, not the %d sent", len(got), len(body))
			}
			if claimcheck.IsClaimCheck(&nats.Msg{Header: hdr}) || hdr.Get("Want") == "" {
				t.Fatalf("handler saw headers %v", hdr)
			}
			if !bytes.Equal(reply.Data, payload(tc.rep, 2)) {
				t.Fatalf("reply of %d bytes is not the %d sent", len(reply.Data), tc.rep)
			}
			if claimcheck.IsClaimCheck(reply) {
				t.Fatalf("reply still carries claim-check headers: %v", reply.Header)
			}
			if n := e.stored(t); n != 0 {
				t.Fatalf("%d messages left in the bucket after the call", n)
			}
			if m.Header.Get(shim.HeaderTimeout) != "" || len(m.Data) != tc.req {
				t.Fatal("the caller's message was modified")
			}
		})
	}
}

func TestOverflow100MiBReply(t *testing.T) {
	if testing.Short() {
		t.Skip("100 MiB")
	}
	e := newOverflowEnv(t)
	const size = 100 << 20
	want := payload(size, 7)
	var runs atomic.Int64
	e.serveHandler(t, shim.Handler(func(context.Context, *nats.Msg) ([]byte, error) {
		runs.Add(1)
		return want, nil
	}, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc)))
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst), shim.WithTimeout(60*time.Second))
	start := time.Now()
	reply, err := c.Request(context.Background(), "svc", []byte("q"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("100 MiB reply in %v", time.Since(start))
	if !bytes.Equal(reply.Data, want) {
		t.Fatalf("reply of %d bytes differs from the %d sent", len(reply.Data), size)
	}
	if runs.Load() != 1 {
		t.Fatalf("responder ran %d times", runs.Load())
	}
	if n := e.stored(t); n != 0 {
		t.Fatalf("%d messages left in the bucket", n)
	}
}

func TestOverflowExactLimit(t *testing.T) {
	e := newOverflowEnv(t)
	resp := &sizedResponder{}
	e.serveHandler(t, shim.Handler(resp.fn, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc)))
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst), shim.WithTimeout(5*time.Second))
	warm(t, c)
	// What the client sends besides the body: "Want", the accept header
	// and the timeout ("5000", or "4999" after a stall: the same length).
	hdr := nats.Header{"Want": {"10"}, shim.HeaderAcceptClaimCheck: {e.cst.Bucket()}, shim.HeaderTimeout: {"5000"}}
	atLimit := overflowLimit - shim.HeaderSize(hdr)
	for _, tc := range []struct {
		body  int
		claim bool
	}{{atLimit, false}, {atLimit + 1, true}} {
		_, err := c.RequestMsg(context.Background(), &nats.Msg{Subject: "svc", Data: make([]byte, tc.body), Header: nats.Header{"Want": {"10"}}})
		if err != nil {
			t.Fatalf("request of %d bytes: %v", tc.body+shim.HeaderSize(hdr), err)
		}
		claim, plain := e.tap.count(t, "svc", tc.body)
		if (claim == 1) != tc.claim || claim+plain != 1 {
			t.Fatalf("request of %d bytes (limit %d): %d claim checks, %d plain on the wire", tc.body+shim.HeaderSize(hdr), overflowLimit, claim, plain)
		}
		if _, got, _ := resp.state(); len(got) != tc.body {
			t.Fatalf("responder got %d bytes, want %d", len(got), tc.body)
		}
	}
	// A reply without headers counts its body only.
	for _, tc := range []struct {
		size  int
		claim bool
	}{{overflowLimit, false}, {overflowLimit + 1, true}} {
		reply, err := c.RequestMsg(context.Background(), &nats.Msg{Subject: "svc", Header: nats.Header{"Want": {strconv.Itoa(tc.size)}}})
		if err != nil {
			t.Fatalf("reply of %d bytes: %v", tc.size, err)
		}
		if !bytes.Equal(reply.Data, payload(tc.size, 2)) {
			t.Fatalf("reply of %d bytes differs", tc.size)
		}
		claim, plain := e.tap.count(t, "_INBOX.", tc.size)
		if (claim == 1) != tc.claim || claim+plain != 1 {
			t.Fatalf("reply of %d bytes (limit %d): %d claim checks, %d plain on the wire", tc.size, overflowLimit, claim, plain)
		}
	}
	if n := e.stored(t); n != 0 {
		t.Fatalf("%d messages left in the bucket", n)
	}
}

func TestOverflowDeadlineDuringRequestUpload(t *testing.T) {
	e := newOverflowEnv(t)
	resp := &sizedResponder{}
	e.serveHandler(t, shim.Handler(resp.fn, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc)))
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst))
	warm(t, c)
	_, err := c.Request(context.Background(), "svc", make([]byte, 64<<20), shim.Timeout(30*time.Millisecond))
	var se *shim.Error
	if !errors.As(err, &se) || se.Sent || shim.Classify(err) != shim.OutcomeNotRun || !errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(err.Error(), "storing the request") {
		t.Fatalf("deadline during the upload: want a not-run deadline error, got %v (%+v)", err, se)
	}
	eventually(t, 10*time.Second, func() bool { return e.stored(t) == 0 }, "no chunk left in the bucket")
	stays(t, 200*time.Millisecond, func() bool { return e.tap.on("svc") == 0 }, "nothing sent")
	if runs, _, _ := resp.state(); runs != 0 {
		t.Fatalf("responder ran %d times", runs)
	}
}

func TestOverflowDeadlineDuringResolve(t *testing.T) {
	e := newOverflowEnv(t)
	resp := &sizedResponder{}
	e.serveHandler(t, shim.Handler(resp.fn, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc)))
	// A claim-checked request that leaves the responder 1 ms to read
	// 32 MiB, as a caller whose deadline is about to pass does.
	ref, err := e.cst.Prepare(context.Background(), &nats.Msg{Subject: "svc", Data: make([]byte, 32<<20)}, 64)
	if err != nil || !claimcheck.IsClaimCheck(ref) {
		t.Fatalf("prepare: %v", err)
	}
	ref.Header.Set(shim.HeaderTimeout, "1")
	reply, err := e.nc.RequestMsg(ref, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := reply.Header.Get(shim.HeaderErrorCode); got != shim.CodeClaimCheckUnresolved || reply.Header.Get(shim.HeaderOutcome) != "rejected" ||
		!strings.Contains(reply.Header.Get(shim.HeaderError), "deadline") {
		t.Fatalf("reply headers %v, want a %s rejection for the deadline", reply.Header, shim.CodeClaimCheckUnresolved)
	}
	if runs, _, _ := resp.state(); runs != 0 {
		t.Fatalf("handler ran %d times", runs)
	}
	// The responder never deletes the request payload.
	if n := e.stored(t); n == 0 {
		t.Fatal("the responder deleted the request payload")
	}
	if err := e.cst.Discard(context.Background(), ref); err != nil {
		t.Fatal(err)
	}
}

func TestOverflowDeadlineDuringReplyDownload(t *testing.T) {
	e := newOverflowEnv(t)
	// A responder that stores a 32 MiB reply and sends its reference 20 ms
	// before the caller's deadline: the operation completed, and the
	// download (which would need over 1.6 GB/s) cannot finish. The test
	// shares the caller's absolute deadline with the responder, so that
	// transit and scheduling delays do not eat into the margin.
	deadline := time.Now().Add(3 * time.Second)
	if _, err := e.rnc.Subscribe("svc", func(m *nats.Msg) {
		ref, err := e.rst.Prepare(context.Background(), &nats.Msg{Subject: m.Reply, Data: make([]byte, 32<<20)}, 0)
		if err != nil {
			t.Error(err)
			return
		}
		time.Sleep(time.Until(deadline.Add(-20 * time.Millisecond)))
		_ = m.RespondMsg(ref)
	}); err != nil {
		t.Fatal(err)
	}
	_ = e.rnc.Flush()
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst))
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	_, err := c.Request(ctx, "svc", []byte("q"))
	var se *shim.Error
	if !errors.As(err, &se) || se.Code != shim.CodeReplyLost || !errors.Is(err, shim.ErrReplyLost) || !errors.Is(err, context.DeadlineExceeded) ||
		shim.Classify(err) != shim.OutcomeUnknown || !se.Sent {
		t.Fatalf("deadline during the download: want REPLY_LOST (unknown), got %v", err)
	}
	if n := e.stored(t); n != 0 {
		t.Fatalf("the caller left %d messages of the reply payload", n)
	}
}

func TestOverflowReplyMissing(t *testing.T) {
	e := newOverflowEnv(t)
	// A reference whose payload is gone by the time the caller reads it.
	if _, err := e.rnc.Subscribe("svc", func(m *nats.Msg) {
		ref, err := e.rst.Prepare(context.Background(), &nats.Msg{Subject: m.Reply, Data: make([]byte, 1<<20)}, 0)
		if err != nil {
			t.Error(err)
			return
		}
		_ = e.rst.Discard(context.Background(), ref)
		_ = m.RespondMsg(ref)
	}); err != nil {
		t.Fatal(err)
	}
	_ = e.rnc.Flush()
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst))
	_, err := c.Request(context.Background(), "svc", []byte("q"))
	if !errors.Is(err, shim.ErrReplyLost) || !errors.Is(err, claimcheck.ErrMissing) || shim.Classify(err) != shim.OutcomeUnknown {
		t.Fatalf("missing reply payload: got %v", err)
	}
}

func TestOverflowForgedReference(t *testing.T) {
	e := newOverflowEnv(t)
	resp := &sizedResponder{}
	e.serveHandler(t, shim.Handler(resp.fn, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc)))
	// An object stored for another subject, referred to from "svc".
	other, err := e.cst.Prepare(context.Background(), &nats.Msg{Subject: "other", Data: make([]byte, 1<<20)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	forged := &nats.Msg{Subject: "svc", Header: nats.Header{
		claimcheck.HeaderRef:  other.Header[claimcheck.HeaderRef],
		claimcheck.HeaderSize: other.Header[claimcheck.HeaderSize],
	}}
	reply, err := e.nc.RequestMsg(forged, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Header.Get(shim.HeaderErrorCode) != shim.CodeClaimCheckUnresolved || reply.Header.Get(shim.HeaderOutcome) != "rejected" {
		t.Fatalf("forged reference answered with %v", reply.Header)
	}
	if runs, _, _ := resp.state(); runs != 0 {
		t.Fatalf("handler ran %d times on a forged reference", runs)
	}
	// The object of the other subject is untouched.
	if _, err := e.cst.Resolve(context.Background(), other); err != nil {
		t.Fatalf("the other subject's object: %v", err)
	}
}

func TestOverflowMixedPeers(t *testing.T) {
	e := newOverflowEnv(t)
	newResp, oldResp := &sizedResponder{}, &sizedResponder{}
	e.serveHandler(t, shim.Handler(newResp.fn, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc)))
	if _, err := e.rnc.Subscribe("old", shim.Handler(oldResp.fn, shim.Conn(e.rnc))); err != nil {
		t.Fatal(err)
	}
	_ = e.rnc.Flush()
	oldClient := shim.NewClient(e.nc)
	newClient := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst))
	want := func(n int) nats.Header { return nats.Header{"Want": {strconv.Itoa(n)}} }

	// Old client, new responder: as today.
	reply, err := oldClient.RequestMsg(context.Background(), &nats.Msg{Subject: "svc", Data: []byte("small"), Header: want(5)})
	if err != nil || len(reply.Data) != 5 {
		t.Fatalf("old client, small call: %v", err)
	}
	_, err = oldClient.RequestMsg(context.Background(), &nats.Msg{Subject: "svc", Data: make([]byte, 2*overflowLimit), Header: want(5)})
	if !errors.Is(err, shim.ErrPayloadTooLarge) || shim.Classify(err) != shim.OutcomeNotRun {
		t.Fatalf("old client, large request: want a local PAYLOAD_TOO_LARGE, got %v", err)
	}
	_, err = oldClient.RequestMsg(context.Background(), &nats.Msg{Subject: "svc", Header: want(2 * overflowLimit)})
	if !errors.Is(err, shim.ErrReplyTooLarge) {
		t.Fatalf("old client, large reply: want PAYLOAD_TOO_LARGE from the responder, got %v", err)
	}
	if runs, _, _ := newResp.state(); runs != 2 {
		t.Fatalf("new responder ran %d times, want 2", runs)
	}

	// New client, old responder: small calls and large replies as today;
	// a large request is refused before the handler runs.
	reply, err = newClient.RequestMsg(context.Background(), &nats.Msg{Subject: "old", Data: []byte("small"), Header: want(5)})
	if err != nil || len(reply.Data) != 5 {
		t.Fatalf("new client, small call: %v", err)
	}
	_, err = newClient.RequestMsg(context.Background(), &nats.Msg{Subject: "old", Header: want(2 * overflowLimit)})
	if !errors.Is(err, shim.ErrReplyTooLarge) {
		t.Fatalf("new client, large reply from an old responder: got %v", err)
	}
	_, err = newClient.RequestMsg(context.Background(), &nats.Msg{Subject: "old", Data: make([]byte, 2*overflowLimit), Header: want(5)})
	var se *shim.Error
	if !errors.As(err, &se) || se.Code != shim.CodeClaimCheckUnresolved || shim.Classify(err) != shim.OutcomeRejected {
		t.Fatalf("new client, large request to an old responder: got %v", err)
	}
	if runs, _, _ := oldResp.state(); runs != 2 {
		t.Fatalf("old responder ran %d times, want 2", runs)
	}
	if n := e.stored(t); n != 0 {
		t.Fatalf("%d messages left in the bucket", n)
	}
}

// With WithPayloadCap below max_payload, the cap is the limit claim checks
// start at: the Store's decision gets the Client's cap (PrepareLimit).
func TestOverflowPayloadCap(t *testing.T) {
	const capBytes = 8 << 10
	e := newOverflowEnv(t)
	resp := &sizedResponder{}
	e.serveHandler(t, shim.Handler(resp.fn, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc)))
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst), shim.WithPayloadCap(capBytes), shim.WithTimeout(5*time.Second))
	warm(t, c)
	hdr := nats.Header{"Want": {"1"}, shim.HeaderAcceptClaimCheck: {e.cst.Bucket()}, shim.HeaderTimeout: {"5000"}}
	atCap := capBytes - shim.HeaderSize(hdr)
	for _, tc := range []struct {
		body  int
		claim bool
	}{{atCap, false}, {atCap + 1, true}} {
		if _, err := c.RequestMsg(context.Background(), &nats.Msg{Subject: "svc", Data: make([]byte, tc.body), Header: nats.Header{"Want": {"1"}}}); err != nil {
			t.Fatal(err)
		}
		claim, plain := e.tap.count(t, "svc", tc.body)
		if (claim == 1) != tc.claim || claim+plain != 1 {
			t.Fatalf("request of %d bytes (cap %d): %d claim checks, %d plain", tc.body+shim.HeaderSize(hdr), capBytes, claim, plain)
		}
	}
}

func TestOverflowJSONHandler(t *testing.T) {
	e := newOverflowEnv(t)
	type doc struct {
		Name string `json:"name"`
		Body []byte `json:"body"`
	}
	var runs atomic.Int64
	e.serveHandler(t, shim.JSONHandler(func(_ context.Context, d doc) (doc, error) {
		runs.Add(1)
		return doc{Name: d.Name + " (stored)", Body: append(d.Body, d.Body...)}, nil
	}, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc)))
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst), shim.WithTimeout(30*time.Second))
	in := doc{Name: "report", Body: payload(5*overflowLimit, 9)}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	reply, err := c.Request(context.Background(), "svc", data)
	if err != nil {
		t.Fatal(err)
	}
	var out doc
	if err := json.Unmarshal(reply.Data, &out); err != nil {
		t.Fatal(err)
	}
	if out.Name != "report (stored)" || !bytes.Equal(out.Body, append(in.Body, in.Body...)) || runs.Load() != 1 {
		t.Fatalf("JSON round trip: %q, %d body bytes, %d runs", out.Name, len(out.Body), runs.Load())
	}
	if claim, _ := e.tap.count(t, "svc", len(data)); claim != 1 {
		t.Fatalf("the request went as %d claim checks, want 1", claim)
	}
	if n := e.stored(t); n != 0 {
		t.Fatalf("%d messages left in the bucket", n)
	}
}

// Many callers at once, each with its own claim-checked request and reply:
// every reply is the one for its request, and nothing is left behind.
func TestOverflowConcurrent(t *testing.T) {
	e := newOverflowEnv(t)
	var runs atomic.Int64
	// The reply is the request reversed, so a mix-up shows.
	if _, err := e.rnc.QueueSubscribe("svc", "q", shim.Handler(func(_ context.Context, m *nats.Msg) ([]byte, error) {
		runs.Add(1)
		out := make([]byte, len(m.Data))
		for i, b := range m.Data {
			out[len(out)-1-i] = b
		}
		return out, nil
	}, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc))); err != nil {
		t.Fatal(err)
	}
	_ = e.rnc.Flush()
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst), shim.WithTimeout(60*time.Second))
	const callers, calls = 16, 3
	var wg sync.WaitGroup
	for g := range callers {
		wg.Go(func() {
			for i := range calls {
				req := payload(3*overflowLimit+g*1000+i, uint64(100+g*calls+i))
				reply, err := c.Request(context.Background(), "svc", req)
				if err != nil {
					t.Error(err)
					return
				}
				for j := range req {
					if reply.Data[len(req)-1-j] != req[j] {
						t.Errorf("caller %d call %d: wrong reply", g, i)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if runs.Load() != callers*calls {
		t.Fatalf("responder ran %d times, want %d", runs.Load(), callers*calls)
	}
	if n := e.stored(t); n != 0 {
		t.Fatalf("%d messages left in the bucket", n)
	}
}

// Attempts with an operation ID and a claim-checked request: the request
// is stored again for the second attempt, the responder sees the same ID
// and the whole body both times, and both copies are deleted.
func TestOverflowAttempts(t *testing.T) {
	e := newOverflowEnv(t)
	var log idLog
	var lens sync.Map
	e.serveHandler(t, shim.Handler(func(ctx context.Context, m *nats.Msg) ([]byte, error) {
		n := log.add(shim.OperationIDFrom(ctx))
		lens.Store(n, len(m.Data))
		if n == 1 {
			<-ctx.Done()
			time.Sleep(200 * time.Millisecond) // the first reply comes too late
		}
		return payload(2*overflowLimit, 2), nil
	}, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc)))
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst))
	body := payload(4*overflowLimit, 11)
	reply, err := c.Request(context.Background(), "svc", body, shim.OperationID("op-cc"), shim.Attempts(2), shim.Timeout(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(reply.Data, payload(2*overflowLimit, 2)) {
		t.Fatal("reply differs")
	}
	if ids := log.all(); len(ids) != 2 || ids[0] != "op-cc" || ids[1] != "op-cc" {
		t.Fatalf("responder saw %q", ids)
	}
	for _, k := range []int{1, 2} {
		if v, _ := lens.Load(k); v != len(body) {
			t.Fatalf("run %d saw %v bytes, want %d", k, v, len(body))
		}
	}
	// The first run's reply was not stored (its deadline had passed: an
	// INTERNAL error reply went instead), both request payloads were
	// deleted by the caller, the second reply's after reading it.
	if n := e.stored(t); n != 0 {
		t.Fatalf("%d messages left in the bucket", n)
	}
}
