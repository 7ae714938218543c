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
