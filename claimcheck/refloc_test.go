package claimcheck_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
)

// TestResolveOtherBucket: a Store resolves a reference that names
// another bucket (HeaderBucket) from that bucket, with direct gets of
// its stream, and refuses a reference of a domain it was not given
// (ErrForeignDomain naming it) without a request to the server.
func TestResolveOtherBucket(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.URL())
	a := newStore(t, js, claimcheck.WithBucket("bucket_a"))
	b := newStore(t, js, claimcheck.WithBucket("bucket_b"))
	want := payload(3*limit, 71)
	ref, err := a.Prepare(ctxT(t), &nats.Msg{Subject: "other", Data: want}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ref.Header.Get(claimcheck.HeaderBucket) != "bucket_a" {
		t.Fatalf("reference names bucket %q", ref.Header.Get(claimcheck.HeaderBucket))
	}
	if got, err := b.Resolve(ctxT(t), ref); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Resolve of bucket_a's reference by bucket_b's Store: %d bytes, %v", len(got), err)
	}
	count := newAPICounter(t, srv.URL())
	count.take(t)
	foreign := &nats.Msg{Subject: ref.Subject, Header: nats.Header{}}
	for k, v := range ref.Header {
		foreign.Header[k] = v
	}
	foreign.Header.Set(claimcheck.HeaderDomain, "far_away")
	_, err = b.Resolve(ctxT(t), foreign)
	var re *claimcheck.ResolveError
	if !errors.Is(err, claimcheck.ErrForeignDomain) || !errors.As(err, &re) || !bytes.Contains([]byte(err.Error()), []byte("far_away")) {
		t.Fatalf("Resolve of another domain's reference = %v, want ErrForeignDomain naming it", err)
	}
	if reqs := count.take(t); len(reqs) != 0 {
		t.Fatalf("a refused reference made requests: %v", reqs)
	}
	foreign.Header[claimcheck.HeaderBucket] = []string{"bucket.a"}
	if _, err := b.Resolve(ctxT(t), foreign); !errors.Is(err, claimcheck.ErrCorrupt) {
		t.Fatalf("Resolve with a malformed bucket = %v, want ErrCorrupt", err)
	}
}

// TestResolveOtherDomain: a claim check stored on a leafnode with a
// JetStream domain of its own is resolved on the hub by a Store that
// names that domain (WithDomains), through the domain's JetStream API.
func TestResolveOtherDomain(t *testing.T) {
	t.Parallel()
	hl := natstest.StartHubLeaf(t,
		[]natstest.Option{natstest.MaxPayload(limit), natstest.JetStream(), natstest.Domain("hub")},
		[]natstest.Option{natstest.MaxPayload(limit), natstest.JetStream(), natstest.Domain("edge")})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, ljs := connect(t, hl.Leaf.URL())
	// A bucket name of the edge's own: $O subjects carry no domain, so a
	// same-named bucket on the hub could store (and acknowledge) the
	// edge's upload first, which the Store refuses (ownAck).
	edge := newStore(t, ljs, claimcheck.WithBucket("edge_checks"))
	hnc, _ := connect(t, hl.Hub.URL())
	hjs, err := jetstream.NewWithDomain(hnc, "hub")
	if err != nil {
		t.Fatal(err)
	}
	hub := newStore(t, hjs, claimcheck.WithDomains("edge"))
	want := payload(3*limit, 72)
	ref, err := edge.Prepare(ctx, &nats.Msg{Subject: "edge.data", Data: want}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := ref.Header.Get(claimcheck.HeaderDomain); d != "edge" {
		t.Fatalf("the edge's reference names domain %q", d)
	}
	got, err := hub.Resolve(ctx, ref)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("hub's Resolve of the edge's claim check: %d bytes, %v", len(got), err)
	}
	rc, err := hub.Open(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	buf := new(bytes.Buffer)
	if _, err := buf.ReadFrom(rc); err != nil || !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("hub's Open of the edge's claim check: %d bytes, %v", buf.Len(), err)
	}
}
