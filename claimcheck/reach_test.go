package claimcheck_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
)

// TestReadRefusesChunksThatCannotReachIt: a hub with a 1 MiB max_payload
// and a leaf with 64 KiB. A Store on the hub writes chunks of up to its
// own limit; a leaf Store reading them (through the hub's domain) would
// get direct-get replies above the leaf's limit, and the leaf closes the
// whole leafnode link for one. The read is refused before any chunk is
// asked for, with a permanent ErrTooLarge that says why, and the link
// stays up. The boundary is exact: chunks of what a Store on the leaf
// writes itself (its max_payload less 512 bytes) are read, one byte more
// is refused; so is a payload of one chunk that fits, whatever chunk size
// it declares.
func TestReadRefusesChunksThatCannotReachIt(t *testing.T) {
	t.Parallel()
	const hubLimit, leafLimit = 1 << 20, 64 << 10
	const reach = leafLimit - 512 // chunkSize(leafLimit)
	hl := natstest.StartHubLeaf(t,
		[]natstest.Option{natstest.MaxPayload(hubLimit), natstest.JetStream(), natstest.Domain("hub")},
		[]natstest.Option{natstest.MaxPayload(leafLimit)})
	_, hjs := connect(t, hl.Hub.URL())
	lnc, _ := connect(t, hl.Leaf.URL())
	ljs, err := jetstream.NewWithDomain(lnc, "hub")
	if err != nil {
		t.Fatal(err)
	}
	reader := newStore(t, ljs, claimcheck.WithBucket("reach"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	for _, tc := range []struct {
		name     string
		maxChunk int // the writer's WithMaxChunkSize; 0: DefaultMaxChunkSize
		size     int
		reserve  int // Prepare's: a small payload is claim-checked with a large one
		refused  bool
	}{
		{"the hub's chunks", 0, 2<<20 + 1, 0, true},
		{"chunks the leaf writes", reach, 2<<20 + 1, 0, false},
		{"one byte more", reach + 1, 2<<20 + 1, 0, true},
		{"one chunk that fits, of a larger declared size", 0, reach, hubLimit - 1024, false},
		{"one chunk one byte over", 0, reach + 1, hubLimit - 1024, true},
	} {
		opts := []claimcheck.Option{claimcheck.WithBucket("reach")}
		if tc.maxChunk > 0 {
			opts = append(opts, claimcheck.WithMaxChunkSize(tc.maxChunk))
		}
		writer := newStore(t, hjs, opts...)
		want := payload(tc.size, 91)
		ref, err := writer.Prepare(ctx, &nats.Msg{Subject: "reach.data", Data: want}, tc.reserve)
		if err != nil || !claimcheck.IsClaimCheck(ref) {
			t.Fatalf("%s: not claim-checked: %v", tc.name, err)
		}
		links := hl.Links()
		t0 := time.Now()
		got, err := reader.Resolve(ctx, ref)
		rc, oerr := reader.Open(ctx, ref)
		if oerr == nil {
			var buf bytes.Buffer
			_, oerr = buf.ReadFrom(rc)
			_ = rc.Close()
		}
		took := time.Since(t0)
		if l := hl.Links(); !slices.Equal(l, links) {
			t.Fatalf("%s: the leafnode link was reset (%v, then %v)", tc.name, links, l)
		}
		if !tc.refused {
			if err != nil || !bytes.Equal(got, want) || oerr != nil {
				t.Fatalf("%s: Resolve %d bytes, %v; Open %v", tc.name, len(got), err, oerr)
			}
			continue
		}
		for _, e := range []error{err, oerr} {
			var re *claimcheck.ResolveError
			if !errors.Is(e, claimcheck.ErrTooLarge) || !errors.Is(e, claimcheck.ErrUnreachable) || !errors.As(e, &re) || !re.Permanent() {
				t.Fatalf("%s: %v, want a permanent ErrTooLarge (unreachable chunks)", tc.name, e)
			}
		}
		if took > 5*time.Second {
			t.Errorf("%s: refused after %v, want before any chunk is read", tc.name, took)
		}
		// The payload is still there for readers it can reach.
		if got, err := writer.Resolve(ctx, ref); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: the hub's own read: %v", tc.name, err)
		}
	}
}
