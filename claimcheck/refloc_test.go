package claimcheck_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
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

// edgeAndHub starts a hub (JetStream domain "hub") and a leaf ("edge"),
// and returns them with a Store at the edge on bucket (a name of the
// edge's own: $O subjects carry no domain, so a same-named bucket on the
// hub could store, and acknowledge, the edge's upload first, which the
// Store refuses: ownAck) and a Store on the hub that may read the edge's
// domain (WithDomains).
func edgeAndHub(t *testing.T, bucket string) (hl *natstest.HubLeaf, edge, hub *claimcheck.Store) {
	t.Helper()
	hl = natstest.StartHubLeaf(t,
		[]natstest.Option{natstest.MaxPayload(limit), natstest.JetStream(), natstest.Domain("hub")},
		[]natstest.Option{natstest.MaxPayload(limit), natstest.JetStream(), natstest.Domain("edge")})
	_, ljs := connect(t, hl.Leaf.URL())
	edge = newStore(t, ljs, claimcheck.WithBucket(bucket))
	hnc, _ := connect(t, hl.Hub.URL())
	hjs, err := jetstream.NewWithDomain(hnc, "hub")
	if err != nil {
		t.Fatal(err)
	}
	return hl, edge, newStore(t, hjs, claimcheck.WithDomains("edge"))
}

// TestResolveOtherDomain: a claim check stored on a leafnode with a
// JetStream domain of its own is resolved on the hub by a Store that
// names that domain (WithDomains), through the domain's JetStream API.
func TestResolveOtherDomain(t *testing.T) {
	t.Parallel()
	_, edge, hub := edgeAndHub(t, "edge_checks")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
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

// TestSameBucketNameAcrossDomains: the docs' leafnode recipe. $O subjects
// carry no domain, so with a same-named bucket on both sides of a
// leafnode the hub's stream also stores the edge's uploads (copies nobody
// deletes). With $O.> denied on the leaf's link (deny_imports and
// deny_exports) each upload stays in its domain, and the hub still reads
// and deletes the edge's claim checks through the domain's API
// (WithDomains). Without the deny the copy appears: the control.
func TestSameBucketNameAcrossDomains(t *testing.T) {
	for _, recipe := range []bool{true, false} {
		name := "without the deny (control)"
		if recipe {
			name = "with $O.> denied on the link"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			leafOpts := []natstest.Option{natstest.MaxPayload(limit), natstest.JetStream(), natstest.Domain("edge")}
			if recipe {
				leafOpts = append(leafOpts, natstest.LeafDeny("$O.>"))
			}
			hl := natstest.StartHubLeaf(t, []natstest.Option{natstest.MaxPayload(limit), natstest.JetStream(), natstest.Domain("hub")}, leafOpts)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, ljs := connect(t, hl.Leaf.URL())
			hnc, _ := connect(t, hl.Hub.URL())
			hjs, err := jetstream.NewWithDomain(hnc, "hub")
			if err != nil {
				t.Fatal(err)
			}
			hub := newStore(t, hjs, claimcheck.WithBucket("orders"), claimcheck.WithDomains("edge"))
			edge := newStore(t, ljs, claimcheck.WithBucket("orders"))
			hubStream, err := hjs.Stream(ctx, "OBJ_orders")
			if err != nil {
				t.Fatal(err)
			}
			want := payload(3*limit, 73)
			ref, err := edge.Prepare(ctx, &nats.Msg{Subject: "edge.data", Data: want}, 0)
			if !recipe {
				// The hub's stream stored the upload too; whichever
				// acknowledged first, the copy is there.
				natstest.Eventually(t, 10*time.Second, func() bool {
					info, err := hubStream.Info(ctx)
					return err == nil && info.State.Msgs > 0
				}, "the hub's same-named stream to store a copy of the edge's upload")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := hub.Resolve(ctx, ref)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("hub's Resolve of the edge's claim check: %d bytes, %v", len(got), err)
			}
			if err := hub.Discard(ctx, ref); err != nil {
				t.Fatalf("hub's Discard of the edge's claim check: %v", err)
			}
			info, err := hubStream.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if info.State.Msgs != 0 {
				t.Errorf("the hub's stream holds %d messages: a copy crossed the link", info.State.Msgs)
			}
			str, err := edge.ObjectStore().Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if str.Size() != 0 {
				t.Errorf("the edge's bucket holds %d bytes after the hub's Discard", str.Size())
			}
		})
	}
}

// TestResolveMissingDomain: with the edge's site gone (its leafnode
// server down), the hub's Resolve of an edge claim check fails once the
// domain has not answered for a second, naming the domain, instead of
// treating "no responders" as transient until its deadline; Discard fails
// the same way (a clean-up request may first wait out its own bound of
// 3 s while the hub still routes to the leaving leaf). Both end well
// before the 10 s deadline.
func TestResolveMissingDomain(t *testing.T) {
	t.Parallel()
	hl, edge, hub := edgeAndHub(t, "edge_gone")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ref, err := edge.Prepare(ctx, &nats.Msg{Subject: "edge.data", Data: payload(3*limit, 74)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	hl.Leaf.Shutdown()
	for name, op := range map[string]func(ctx context.Context) error{
		"Resolve": func(ctx context.Context) error { _, err := hub.Resolve(ctx, ref); return err },
		"Discard": func(ctx context.Context) error { return hub.Discard(ctx, ref) },
	} {
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		t0 := time.Now()
		err := op(rctx)
		took := time.Since(t0)
		rcancel()
		if err == nil || !strings.Contains(err.Error(), `"edge"`) {
			t.Errorf("%s with the edge gone: %v; want an error naming domain \"edge\"", name, err)
		}
		if took >= 8*time.Second {
			t.Errorf("%s took %v with the edge gone; want it to end well before its 10 s deadline", name, took)
		}
	}
}
