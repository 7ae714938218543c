package shim_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base32"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/shim"
)

// subjectOnlyName is the object name a claim-checked reply had when it was
// derived from the reply subject alone (protocol before reply-key).
func subjectOnlyName(subject string) string {
	sum := sha256.Sum256([]byte("natssend reply\x00" + subject))
	return base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding).EncodeToString(sum[:16])
}

// TestReplyNameNotClaimableFromTheSubject: a peer with write access to
// the bucket that learns a call's reply subject (here it is told; a
// predictable inbox gave it away) stores an object under every name that
// subject alone determines before the responder stores its reply. The
// reply's name also depends on the caller's per-call reply key, which the
// peer does not have: the call succeeds with the whole reply. With a name
// of the subject alone the responder found it taken, sent nothing, and the
// caller waited for its deadline (DEADLINE_EXCEEDED, outcome unknown).
func TestReplyNameNotClaimableFromTheSubject(t *testing.T) {
	e := newOverflowEnv(t)
	attacker := connect(t, e.s.URL())
	js, err := jetstream.New(attacker)
	if err != nil {
		t.Fatal(err)
	}
	obs, err := js.ObjectStore(context.Background(), e.bucketName)
	if err != nil {
		t.Fatal(err)
	}
	reply := payload(4*overflowLimit, 51)
	e.serveHandler(t, shim.Handler(func(ctx context.Context, req *nats.Msg) ([]byte, error) {
		if _, err := obs.PutBytes(ctx, subjectOnlyName(req.Reply), []byte("planted")); err != nil {
			return nil, err
		}
		return reply, nil
	}, shim.Conn(e.rnc), shim.ServeClaimChecks(e.rst)))
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst), shim.WithTimeout(5*time.Second))
	for i := range 3 {
		got, err := c.Request(context.Background(), "svc", []byte("q"))
		if err != nil || !bytes.Equal(got.Data, reply) {
			t.Fatalf("call %d: %v; want the whole reply", i, err)
		}
	}
}

// TestReplyKeyOnEveryCall: a Client with claim checks sends a reply key of
// 32 lowercase hex digits in its accept header, a new one per call.
func TestReplyKeyOnEveryCall(t *testing.T) {
	e := newOverflowEnv(t)
	keys := make(chan string, 8)
	e.serveHandler(t, func(m *nats.Msg) {
		keys <- m.Header.Get(shim.HeaderAcceptClaimCheck)
		_ = m.Respond(nil) //natssend:reviewed a test responder
	})
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst))
	seen := map[string]bool{}
	for range 4 {
		if _, err := c.Request(context.Background(), "svc", nil); err != nil {
			t.Fatal(err)
		}
		v := <-keys
		key := acceptParam(v, "reply-key")
		if len(key) != 32 || seen[key] {
			t.Fatalf("accept header %q: reply key %q, want 32 hex digits new per call", v, key)
		}
		seen[key] = true
	}
}

// acceptParam returns parameter k of an accept header value.
func acceptParam(v, k string) string {
	for _, p := range bytes.Split([]byte(v), []byte(";")) {
		if kk, val, ok := bytes.Cut(bytes.TrimSpace(p), []byte("=")); ok && string(kk) == k {
			return string(val)
		}
	}
	return ""
}
