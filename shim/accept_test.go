package shim_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// TestReplyFitsTheCallersLimit: a hub (1 MiB, JetStream domain "hub") and
// a leaf (256 KiB, domain "leaf"). A caller on the leaf with claim checks
// says in its accept header where its store is and what its connection
// accepts. A responder on the hub decides its reply against the smaller
// limit: a reply that fits the hub but not the leaf is a
// PAYLOAD_TOO_LARGE error reply when the responder cannot store it where
// the caller reads (another domain), a claim check when it can (a Store
// in the leaf's domain, any bucket), and the leafnode link is never reset.
func TestReplyFitsTheCallersLimit(t *testing.T) {
	t.Parallel()
	hl, hub, leaf := hubAndLeaf(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	store := func(nc *nats.Conn, domain, bucket string) *claimcheck.Store {
		t.Helper()
		js, err := jetstream.NewWithDomain(nc, domain)
		if err != nil {
			t.Fatal(err)
		}
		st, err := claimcheck.New(ctx, js, claimcheck.WithBucket(bucket), claimcheck.WithStorage(jetstream.MemoryStorage))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	callerStore := store(leaf, "leaf", "caller")
	hubStore := store(hub, "hub", "replies")
	leafReplies := store(hub, "leaf", "leaf_replies") // a hub responder's Store in the leaf's domain (a bucket name of its own: $O subjects carry no domain)
	if hubStore.Domain() != "hub" || leafReplies.Domain() != "leaf" {
		t.Fatalf("domains %q and %q", hubStore.Domain(), leafReplies.Domain())
	}
	reply := make([]byte, 512<<10)
	for subject, st := range map[string]*claimcheck.Store{"svc.hubstore": hubStore, "svc.leafstore": leafReplies} {
		if _, err := shim.Serve(hub, subject, shim.Unary(func(context.Context, *nats.Msg) ([]byte, error) { return reply, nil }, shim.ServeClaimChecks(st))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := shim.Serve(hub, "svc.ping", shim.Unary(func(context.Context, *nats.Msg) ([]byte, error) { return nil, nil })); err != nil {
		t.Fatal(err)
	}
	if err := hub.Flush(); err != nil {
		t.Fatal(err)
	}
	c := shim.NewClient(leaf, shim.WithClaimChecks(callerStore), shim.WithTimeout(10*time.Second))
	natstest.Eventually(t, 10*time.Second, func() bool {
		_, err := shim.NewClient(leaf, shim.WithTimeout(time.Second)).Request(ctx, "svc.ping", nil)
		return err == nil
	}, "the hub's services seen from the leaf")
	links := hl.Links()

	_, err := c.Request(ctx, "svc.hubstore", nil)
	var se *shim.Error
	if !errors.As(err, &se) || !errors.Is(err, shim.ErrReplyTooLarge) {
		t.Errorf("a reply over the caller's limit from a Store of another domain: %v; want a PAYLOAD_TOO_LARGE error reply", err)
	}
	got, err := c.Request(ctx, "svc.leafstore", nil)
	if err != nil || len(got.Data) != len(reply) {
		t.Errorf("a reply over the caller's limit from a Store in the caller's domain: %v; want it whole as a claim check", err)
	}
	// The caller deleted the reply's payload; nothing is left in any
	// bucket of either domain.
	for _, st := range []*claimcheck.Store{callerStore, hubStore, leafReplies} {
		natstest.Eventually(t, 5*time.Second, func() bool {
			str, err := st.ObjectStore().Status(ctx)
			return err == nil && str.Size() == 0
		}, "bucket "+st.Bucket()+" of domain "+st.Domain()+" to be empty")
	}
	if now := hl.Links(); !slices.Equal(now, links) {
		t.Fatalf("the leafnode link was reset (links %v, then %v)", links, now)
	}
}

// TestReplyStoredInADomainTheCallerReads: claim-checked RPC across a
// leafnode in both directions. A caller whose Store may read the other
// domain (claimcheck.WithDomains) says so in its accept header; a
// responder whose Store is in that domain stores an oversized reply there,
// the caller reads it across the link and deletes it, and no copy is left
// in either domain. A caller that does not read the responder's domain
// gets PAYLOAD_TOO_LARGE, as before.
func TestReplyStoredInADomainTheCallerReads(t *testing.T) {
	t.Parallel()
	hl, hub, leaf := hubAndLeaf(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	store := func(nc *nats.Conn, domain, bucket string, opts ...claimcheck.Option) *claimcheck.Store {
		t.Helper()
		js, err := jetstream.NewWithDomain(nc, domain)
		if err != nil {
			t.Fatal(err)
		}
		st, err := claimcheck.New(ctx, js, append([]claimcheck.Option{claimcheck.WithBucket(bucket), claimcheck.WithStorage(jetstream.MemoryStorage)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	hubStore := store(hub, "hub", "hub_cc")
	leafStore := store(leaf, "leaf", "leaf_cc")
	reply := make([]byte, 3*leafLimit)
	for _, sv := range []struct {
		nc      *nats.Conn
		subject string
		st      *claimcheck.Store
	}{{hub, "svc.at.hub", hubStore}, {leaf, "svc.at.leaf", leafStore}} {
		if _, err := shim.Serve(sv.nc, sv.subject, shim.Unary(func(context.Context, *nats.Msg) ([]byte, error) { return reply, nil }, shim.ServeClaimChecks(sv.st))); err != nil {
			t.Fatal(err)
		}
		if err := sv.nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	leafCaller := shim.NewClient(leaf, shim.WithClaimChecks(store(leaf, "leaf", "leaf_calls", claimcheck.WithDomains("hub"))), shim.WithTimeout(10*time.Second))
	hubCaller := shim.NewClient(hub, shim.WithClaimChecks(store(hub, "hub", "hub_calls", claimcheck.WithDomains("leaf"))), shim.WithTimeout(10*time.Second))
	plainLeafCaller := shim.NewClient(leaf, shim.WithClaimChecks(store(leaf, "leaf", "leaf_plain")), shim.WithTimeout(10*time.Second))
	for _, subj := range []string{"svc.at.hub", "svc.at.leaf"} {
		natstest.Eventually(t, 10*time.Second, func() bool {
			_, err := shim.NewClient(leaf, shim.WithTimeout(time.Second)).Request(ctx, subj, nil, shim.Timeout(time.Second))
			return !errors.Is(err, nats.ErrNoResponders)
		}, subj+" seen from the leaf")
	}
	links := hl.Links()

	for name, call := range map[string]func() (*nats.Msg, error){
		"leaf caller, hub responder": func() (*nats.Msg, error) { return leafCaller.Request(ctx, "svc.at.hub", nil) },
		"hub caller, leaf responder": func() (*nats.Msg, error) { return hubCaller.Request(ctx, "svc.at.leaf", nil) },
	} {
		got, err := call()
		if err != nil || len(got.Data) != len(reply) {
			t.Errorf("%s: %v; want the %d-byte reply as a claim check", name, err, len(reply))
		}
	}
	if _, err := plainLeafCaller.Request(ctx, "svc.at.hub", nil); !errors.Is(err, shim.ErrReplyTooLarge) {
		t.Errorf("a caller that does not read the hub's domain: %v; want PAYLOAD_TOO_LARGE", err)
	}
	for _, st := range []*claimcheck.Store{hubStore, leafStore} {
		natstest.Eventually(t, 5*time.Second, func() bool {
			str, err := st.ObjectStore().Status(ctx)
			return err == nil && str.Size() == 0
		}, "bucket "+st.Bucket()+" of domain "+st.Domain()+" to be empty")
	}
	if now := hl.Links(); !slices.Equal(now, links) {
		t.Fatalf("the leafnode link was reset (links %v, then %v)", links, now)
	}
}
