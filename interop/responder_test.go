package interop_test

import (
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/shim"
)

// TestShimCallsJSResponders: nats.js responders that follow the spec
// serve a shim Client: a reply that fits, a reply over the limit as a
// claim check in the caller's bucket (read and deleted by the Client),
// PAYLOAD_TOO_LARGE over the responder's limit or the caller's announced
// one (a path cap), a claim-checked request the responder resolves
// (bound to its subject), its refusal by a responder without claim
// checks, rejections and failures, the timeout and operation ID headers.
func TestShimCallsJSResponders(t *testing.T) {
	requireInterop(t)
	s, nc, js := server(t)
	st := store(t, js)
	p := runPeer(t, "serve", s.URL())
	ctx := ctxT(t, 2*time.Minute)
	plain := shim.NewClient(nc)
	cc := shim.NewClient(nc, shim.WithClaimChecks(st))

	call := func(c *shim.Client, subject string, body []byte, opts ...shim.CallOption) ([]byte, error) {
		t.Helper()
		m, err := c.Request(ctx, subject, body, opts...)
		if err != nil {
			return nil, err
		}
		return m.Data, nil
	}
	if got, err := call(plain, "jsrpc.echo", []byte("hello")); err != nil || string(got) != "hello" {
		t.Fatalf("echo: %q, %v", got, err)
	}
	// A reply over the responder's limit: a claim check for a caller
	// that accepts them, PAYLOAD_TOO_LARGE (the responder ran) otherwise.
	for _, n := range []int{60_000, 200_000, 1 << 20} {
		got, err := call(cc, "jsrpc.size", []byte(strconv.Itoa(n)))
		if err != nil || sum(got) != sum(pattern(n, 0)) {
			t.Fatalf("claim-checked reply of %d bytes: %d bytes, %v", n, len(got), err)
		}
	}
	_, err := call(plain, "jsrpc.size", []byte("200000"))
	if !errors.Is(err, shim.ErrReplyTooLarge) || shim.Classify(err) != shim.OutcomeUnknown {
		t.Fatalf("a reply over the limit without claim checks: %v, want a PAYLOAD_TOO_LARGE reply (unknown)", err)
	}
	// The caller's limit is a path cap: the responder must decide against it.
	capped, err := shim.Connect(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer capped.Close()
	if err := shim.CapPayload(capped, 1000); err != nil {
		t.Fatal(err)
	}
	if _, err := call(shim.NewClient(capped), "jsrpc.size", []byte("2000")); !errors.Is(err, shim.ErrReplyTooLarge) {
		t.Fatalf("a reply over the caller's announced limit: %v, want PAYLOAD_TOO_LARGE", err)
	}
	if got, err := call(shim.NewClient(capped, shim.WithClaimChecks(store(t, jsOf(t, capped)))), "jsrpc.size", []byte("2000")); err != nil || sum(got) != sum(pattern(2000, 0)) {
		t.Fatalf("a claim-checked reply under the caller's announced limit: %d bytes, %v", len(got), err)
	}
	// A claim-checked request.
	big := pattern(300_000, 0)
	if got, err := call(cc, "jsrpc.sha", big); err != nil || string(got) != sum(big) {
		t.Fatalf("claim-checked request: %q, %v", got, err)
	}
	_, err = call(cc, "jsrpc.sha-nocc", big)
	var e *shim.Error
	if !errors.As(err, &e) || e.Code != shim.CodeClaimCheckUnresolved || shim.Classify(err) != shim.OutcomeRejected {
		t.Fatalf("claim-checked request to a responder without claim checks: %v, want CLAIM_CHECK_UNRESOLVED (rejected)", err)
	}
	if _, err = call(plain, "jsrpc.invalid", nil); !errors.As(err, &e) || e.Code != shim.CodeInvalidArgument || shim.Classify(err) != shim.OutcomeRejected {
		t.Fatalf("invalid: %v", err)
	}
	if _, err = call(plain, "jsrpc.fail", nil); !errors.As(err, &e) || e.Code != shim.CodeInternal || shim.Classify(err) != shim.OutcomeUnknown {
		t.Fatalf("fail: %v", err)
	}
	got, err := call(plain, "jsrpc.timeout", nil, shim.Timeout(5*time.Second), shim.OperationID("op-1"))
	if err != nil || !strings.HasPrefix(string(got), "Natssend-Timeout=") || !strings.HasSuffix(string(got), " Natssend-Operation-Id=op-1") {
		t.Fatalf("headers: %q, %v", got, err)
	}
	if ms, _ := strconv.Atoi(strings.Fields(strings.TrimPrefix(string(got), "Natssend-Timeout="))[0]); ms < 1 || ms > 5000 {
		t.Fatalf("Natssend-Timeout %q", got)
	}
	replyKeyNames(t, nc, st)
	scatterGather(t, cc)
	if n := bucketObjects(t, st); n != 0 {
		t.Errorf("%d objects left: the Client deletes its claim-checked requests and replies", n)
	}
	if err := nc.Publish("interop.done", nil); err != nil { //natssend:reviewed test control message
		t.Fatal(err)
	}
	p.wait(nil)
}

// replyKeyNames: a hand-made version 2 caller sends reply-key; two
// nats.js responders answer the request with a claim-checked reply: the
// object is named as docs/protocol.md 5.3 derives it (computed here on
// its own), only one reply is stored and sent, and it resolves bound to
// the reply subject.
func replyKeyNames(t *testing.T, nc *nats.Conn, st *claimcheck.Store) {
	t.Helper()
	ctx := ctxT(t, time.Minute)
	key := "9f0c2a6d4b1e8f7a0c3d5e6f7a8b9c0d"
	inbox := nc.NewInbox()
	replies := make(chan *nats.Msg, 4)
	if _, err := nc.ChanSubscribe(inbox, replies); err != nil {
		t.Fatal(err)
	}
	req := &nats.Msg{Subject: "jsrpc.twice", Reply: inbox, Data: []byte("200000"), Header: nats.Header{
		shim.HeaderAcceptClaimCheck: {st.Bucket() + "; domain=; max-payload=65536; reply-key=" + key},
		shim.HeaderTimeout:          {"10000"},
	}}
	if err := nc.PublishMsg(req); err != nil { //natssend:reviewed a hand-made version 2 caller
		t.Fatal(err)
	}
	ref := <-replies
	sum := sha256.Sum256([]byte("natssend reply\x00" + key + "\x00" + inbox))
	name := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:16]))
	if got := ref.Header.Get(claimcheck.HeaderRef); got != name {
		t.Fatalf("reply object %q, want the spec's %q", got, name)
	}
	select {
	case m := <-replies:
		t.Fatalf("a second reply: %v", m.Header)
	case <-time.After(time.Second): // the other responder's conditional write was refused
	}
	got, err := st.Resolve(ctx, ref)
	if err != nil || string(got) != string(pattern(200_000, 0)) {
		t.Fatalf("resolving the reply: %d bytes, %v", len(got), err)
	}
	if err := st.Discard(ctx, ref); err != nil {
		t.Fatal(err)
	}
}

// scatterGather: RequestMany to three nats.js responders: the request
// carries Natssend-Max-Payload, never the accept header (docs/protocol.md
// 7), even from a Client with claim checks; an error reply is yielded and
// the collection goes on; the empty reply ends it (the sentinel) long
// before the deadline.
func scatterGather(t *testing.T, c *shim.Client) {
	t.Helper()
	var ok []string
	var errs []error
	t0 := time.Now()
	for m, err := range c.RequestMany(ctxT(t, time.Minute), "jsrpc.many", nil, shim.Sentinel(shim.EmptyReply)) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ok = append(ok, string(m.Data))
	}
	if len(ok) != 1 || ok[0] != "accept=false max-payload=65536" {
		t.Fatalf("replies %q, want one saying the request carried max-payload only", ok)
	}
	var e *shim.Error
	if len(errs) != 1 || !errors.As(errs[0], &e) || e.Code != shim.CodeInvalidArgument || shim.Classify(errs[0]) != shim.OutcomeRejected {
		t.Fatalf("errors %v, want one INVALID_ARGUMENT (rejected)", errs)
	}
	if d := time.Since(t0); d >= shim.DefaultTimeout {
		t.Fatalf("ended after %v: the sentinel did not end it", d)
	}
}
