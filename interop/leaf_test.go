package interop_test

import (
	"encoding/json"
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

// TestClaimChecksAcrossALeafnode: a hub (JetStream domain "hub") and a
// leaf without JetStream, both 64 KiB. nats.js on the leaf reads a Go
// claim check of the hub through Claim-Check-Domain (it may read "hub").
// A claim check nats.js wrote on the hub (65,536-byte chunks) is read by
// a Go Store on the hub and refused, before any chunk is asked for, by
// one on the leaf: each chunk with a direct get's headers would be above
// the leaf's limit and close the link, which stays up.
func TestClaimChecksAcrossALeafnode(t *testing.T) {
	requireInterop(t)
	hl := natstest.StartHubLeaf(t,
		[]natstest.Option{natstest.MaxPayload(limit), natstest.JetStream(), natstest.Domain("hub")},
		[]natstest.Option{natstest.MaxPayload(limit)})
	hnc, err := shim.Connect(hl.Hub.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer hnc.Close()
	lnc, err := shim.Connect(hl.Leaf.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer lnc.Close()
	ctx := ctxT(t, 2*time.Minute)
	hub := store(t, jsOf(t, hnc))
	ljs, err := jetstream.NewWithDomain(lnc, "hub")
	if err != nil {
		t.Fatal(err)
	}
	leaf := store(t, ljs)
	links := hl.Links()

	// nats.js on the leaf reads the hub's claim check by its domain.
	results := make(chan jsResult, 4)
	if _, err := lnc.Subscribe("interop.results", func(m *nats.Msg) { //natssend:reviewed the peer's JSON reports, never claim checks
		var r jsResult
		_ = json.Unmarshal(m.Data, &r)
		results <- r
	}); err != nil {
		t.Fatal(err)
	}
	p := runPeer(t, "resolve", hl.Leaf.URL(), "INTEROP_READS=hub", "INTEROP_JS=0")
	// Wait until the leaf's subscription is known on the hub: a request
	// meets no responders until then (the probe's report is skipped).
	natstest.Eventually(t, 30*time.Second, func() bool {
		_, err := hnc.Request("cc.core.probe", nil, 200*time.Millisecond) //natssend:reviewed an interest probe, nobody answers it
		return !errors.Is(err, nats.ErrNoResponders)
	}, "the leaf's interest on the hub")
	data := pattern(300_000, 9)
	m := &nats.Msg{Subject: "cc.core.domain", Data: data, Header: nats.Header{"Interop-Sha256": {sum(data)}}}
	if err := hub.PublishMsg(ctx, m); err != nil {
		t.Fatal(err)
	}
	for r := (jsResult{}); r.Subject != m.Subject; { // skipping the probe's report
		select {
		case r = <-results:
		case <-ctx.Done():
			t.Fatal("no result from nats.js on the leaf")
		}
		if r.Subject == m.Subject && (r.Error != "" || r.Sha256 != r.Expect) {
			t.Fatalf("nats.js on the leaf: %+v", r)
		}
	}
	if err := lnc.Publish("interop.done", nil); err != nil { //natssend:reviewed test control message
		t.Fatal(err)
	}
	p.wait(nil)

	// nats.js writes on the hub, at its own chunk size.
	refs := make(chan *nats.Msg, 4)
	if _, err := hnc.ChanSubscribe("js2go.core", refs); err != nil {
		t.Fatal(err)
	}
	if err := hnc.Flush(); err != nil {
		t.Fatal(err)
	}
	p = runPeer(t, "write", hl.Hub.URL(), "INTEROP_DOMAIN=hub", "INTEROP_CORE_ONLY=1")
	p.wait(nil)
	ref := <-refs
	if ref.Header.Get(claimcheck.HeaderDomain) != "hub" {
		t.Fatalf("nats.js's reference names domain %q", ref.Header.Get(claimcheck.HeaderDomain))
	}
	if got, err := hub.Resolve(ctx, ref); err != nil || sum(got) != ref.Header.Get("Interop-Sha256") {
		t.Fatalf("on the hub: %d bytes, %v", len(got), err)
	}
	if _, err := leaf.Resolve(ctx, ref); !errors.Is(err, claimcheck.ErrTooLarge) {
		t.Fatalf("on the leaf: %v, want ErrTooLarge (chunks that cannot cross the leafnode)", err)
	}
	if l := hl.Links(); !slices.Equal(l, links) {
		t.Fatalf("the leafnode link was reset (%v, then %v)", links, l)
	}
}
