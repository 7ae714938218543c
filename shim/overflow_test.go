package shim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

const overflowLimit = 64 << 10

func TestOverflowRoundTrips(t *testing.T) {
	t.Parallel()
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
	// Not in parallel: 100 MiB (through the race detector, with -race)
	// needs the CPU its 60 s deadline assumes.
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
	t.Parallel()
	e := newOverflowEnv(t)
	resp := &sizedResponder{}
	e.serveHandler(t, shim.Handler(resp.fn, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc)))
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst), shim.WithTimeout(5*time.Second))
	warm(t, c)
	// What the client sends besides the body: "Want", the accept header
	// (the caller's bucket, domain and max_payload) and the timeout
	// ("5000", or "4999" after a stall: the same length).
	hdr := nats.Header{"Want": {"10"}, shim.HeaderAcceptClaimCheck: {acceptOf(e.cst, overflowLimit)}, shim.HeaderTimeout: {"5000"}}
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

func TestOverflowMixedPeers(t *testing.T) {
	t.Parallel()
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
// start at: the Store's decision gets the Client's cap (the capped claim check).
func TestOverflowPayloadCap(t *testing.T) {
	t.Parallel()
	const capBytes = 8 << 10
	e := newOverflowEnv(t)
	resp := &sizedResponder{}
	e.serveHandler(t, shim.Handler(resp.fn, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc)))
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst), shim.WithPayloadCap(capBytes), shim.WithTimeout(5*time.Second))
	warm(t, c)
	hdr := nats.Header{"Want": {"1"}, shim.HeaderAcceptClaimCheck: {acceptOf(e.cst, overflowLimit)}, shim.HeaderTimeout: {"5000"}}
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
	t.Parallel()
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
	t.Parallel()
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

// Attempts with an operation ID and claim checks. The first attempt's
// reply comes after the attempt's wait and answers the call. With a small
// request the second attempt runs too and its claim-checked reply, which
// comes after the call ended, is deleted by the caller. With a
// claim-checked request the request is stored once and sent twice; the
// second attempt may find it deleted (the call ended) and then does not
// run. Either way nothing is left stored.
func TestOverflowAttempts(t *testing.T) {
	t.Parallel()
	for _, large := range []bool{false, true} {
		t.Run(map[bool]string{false: "small request", true: "claim-checked request"}[large], func(t *testing.T) {
			e := newOverflowEnv(t)
			var log idLog
			var lens sync.Map
			e.serveHandler(t, shim.Handler(func(ctx context.Context, m *nats.Msg) ([]byte, error) {
				n := log.add(shim.OperationIDFrom(ctx))
				lens.Store(n, len(m.Data))
				if n == 1 {
					time.Sleep(500 * time.Millisecond) // past the attempt's wait
				}
				return payload(2*overflowLimit, 2), nil
			}, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc)))
			c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst))
			body := payload(100, 11)
			if large {
				body = payload(4*overflowLimit, 11)
			}
			reply, err := c.Request(context.Background(), "svc", body, shim.OperationID("op-cc"), shim.Attempts(2), shim.AttemptTimeout(200*time.Millisecond), shim.Timeout(10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(reply.Data, payload(2*overflowLimit, 2)) {
				t.Fatal("reply differs")
			}
			if !large {
				natstest.Eventually(t, 10*time.Second, func() bool { return len(log.all()) == 2 }, "the second attempt ran")
			}
			for i, id := range log.all() {
				if v, _ := lens.Load(i + 1); id != "op-cc" || v != len(body) {
					t.Fatalf("run %d saw ID %q and %v bytes, want op-cc and %d", i+1, id, v, len(body))
				}
			}
			if claim, plain := e.tap.count(t, "svc", len(body)); large && (claim != 2 || plain != 0) || !large && plain != 2 {
				t.Fatalf("%d claim-checked and %d plain requests on the wire, want the request twice", claim, plain)
			}
			natstest.Eventually(t, 10*time.Second, func() bool { return e.stored(t) == 0 }, "an empty bucket")
		})
	}
}

// acceptOf is the HeaderAcceptClaimCheck value a Client with st sends on a
// connection whose limit is limit.
func acceptOf(st *claimcheck.Store, limit int) string {
	// A request's reply key is new for every call, always 32 hex digits.
	return fmt.Sprintf("%s; domain=%s; reply-key=%032x; max-payload=%d", st.Bucket(), st.Domain(), 0, limit)
}
