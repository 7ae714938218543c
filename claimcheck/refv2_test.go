package claimcheck_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/internal/wire"
)

// TestReferenceNamesBucketAndDomain: a reference says where its payload
// is (HeaderBucket, and HeaderDomain on a server with a JetStream
// domain), and the size decision counts both to the byte: a message
// whose reference is exactly at the limit is claim-checked, one byte more
// of header is refused before anything is stored. A message that sets
// either header itself is refused (ErrReservedHeader).
func TestReferenceNamesBucketAndDomain(t *testing.T) {
	t.Parallel()
	const limit = 8 << 10
	s := startServer(t, natstest.JetStream(), natstest.MaxPayload(limit), natstest.Domain("edge"))
	_, js := connect(t, s.URL())
	ctx := ctxT(t)
	st, err := claimcheck.New(ctx, js, claimcheck.WithBucket("refs"))
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, 3*limit)
	ref, err := st.Prepare(ctx, &nats.Msg{Subject: "ev.x", Data: body}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := ref.Header.Get(claimcheck.HeaderBucket); got != "refs" {
		t.Errorf("%s = %q, want the bucket", claimcheck.HeaderBucket, got)
	}
	if got := ref.Header.Get(claimcheck.HeaderDomain); got != "edge" {
		t.Errorf("%s = %q, want the server's domain", claimcheck.HeaderDomain, got)
	}
	if data, err := st.Resolve(ctx, ref); err != nil || len(data) != len(body) {
		t.Fatalf("resolve: %d bytes, %v", len(data), err)
	}

	// The reference's header block without the user's header, then a user
	// header that brings it exactly to the limit.
	base := wire.HeaderSize(ref.Header)
	pad := limit - base - wire.LineSize("Pad", "")
	at := nats.Header{"Pad": {strings.Repeat("p", pad)}}
	atRef, err := st.Prepare(ctx, &nats.Msg{Subject: "ev.x", Header: at, Data: body}, 0)
	if err != nil {
		t.Fatalf("a reference exactly at the limit: %v", err)
	}
	if n := wire.MsgSize(atRef.Header, 0); n != limit {
		t.Fatalf("the reference is %d bytes, want exactly %d", n, limit)
	}
	over := nats.Header{"Pad": {strings.Repeat("p", pad+1)}}
	if _, err := st.Prepare(ctx, &nats.Msg{Subject: "ev.x", Header: over, Data: body}, 0); !errors.Is(err, claimcheck.ErrTooLarge) {
		t.Fatalf("a reference one byte over the limit: %v, want ErrTooLarge", err)
	}

	for _, k := range []string{claimcheck.HeaderBucket, claimcheck.HeaderDomain} {
		_, err := st.Prepare(ctx, &nats.Msg{Subject: "ev.x", Header: nats.Header{k: {"x"}}, Data: body}, 0)
		if !errors.Is(err, claimcheck.ErrReservedHeader) {
			t.Errorf("a message with %s: %v, want ErrReservedHeader", k, err)
		}
	}
}

// TestWithDomainsValidates: WithDomains refuses what is not a domain.
func TestWithDomainsValidates(t *testing.T) {
	t.Parallel()
	s := startServer(t, natstest.JetStream())
	_, js := connect(t, s.URL())
	for _, d := range []string{"", "a.b", "a b", "*", ">"} {
		if _, err := claimcheck.New(ctxT(t), js, claimcheck.WithDomains("hub", d)); !errors.Is(err, claimcheck.ErrInvalidOption) {
			t.Errorf("WithDomains(%q): %v, want ErrInvalidOption", d, err)
		}
	}
	if _, err := claimcheck.New(ctxT(t), js, claimcheck.WithDomains("hub", "edge-1")); err != nil {
		t.Errorf("WithDomains(hub, edge-1): %v", err)
	}
}
