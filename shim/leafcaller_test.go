package shim_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// Callers on a leaf with a lower max_payload than their responders' hub,
// and no CapPayload anywhere: every request says what the caller's
// connection accepts, and the responder decides against it. The leaf
// closes the whole leafnode link for one message over its limit, so each
// case also checks that the link was never reset.

// leafService serves subject on the hub and waits until the leaf's client
// reaches it.
func leafService(t *testing.T, hub *nats.Conn, c *shim.Client, subject string, svc shim.Service) {
	t.Helper()
	if _, err := shim.Serve(hub, subject, svc); err != nil {
		t.Fatal(err)
	}
	if _, err := shim.Serve(hub, subject+".ping", shim.Unary(func(context.Context, *nats.Msg) ([]byte, error) { return nil, nil })); err != nil {
		t.Fatal(err)
	}
	if err := hub.Flush(); err != nil {
		t.Fatal(err)
	}
	natstest.Eventually(t, 10*time.Second, func() bool {
		_, err := c.Request(context.Background(), subject+".ping", nil, shim.Timeout(200*time.Millisecond))
		return err == nil
	}, "the hub's service seen from the leaf")
}

// sameLinks fails the test when the leafnode link was replaced.
func sameLinks(t *testing.T, hl *natstest.HubLeaf, before []uint64, what string) {
	t.Helper()
	if after := hl.Links(); !slices.Equal(after, before) {
		t.Fatalf("%s: the leafnode link was reset (%v, then %v)", what, before, after)
	}
}

// TestLeafCallerGetsRepliesThatFitIt: a hub handler's reply of exactly
// the leaf caller's limit (header block included) arrives; one byte more
// is PAYLOAD_TOO_LARGE at once (not the caller's deadline), from a bound
// handler, from shim.Respond on a plain subscription, and to RequestMany.
func TestLeafCallerGetsRepliesThatFitIt(t *testing.T) {
	t.Parallel()
	hl, hub, leaf := hubAndLeaf(t, false)
	c := shim.NewClient(leaf, shim.WithTimeout(5*time.Second))
	var size atomic.Int64 // the reply body's size
	leafService(t, hub, c, "leaf.reply", shim.Unary(func(context.Context, *nats.Msg) ([]byte, error) {
		return make([]byte, size.Load()), nil
	}))
	if _, err := hub.Subscribe("leaf.respond", func(m *nats.Msg) { _ = shim.Respond(m, make([]byte, size.Load()), nil) }); err != nil {
		t.Fatal(err)
	}
	if err := hub.Flush(); err != nil {
		t.Fatal(err)
	}
	links := hl.Links()
	for _, subject := range []string{"leaf.reply", "leaf.respond"} {
		size.Store(leafLimit)
		r, err := c.Request(context.Background(), subject, nil)
		if err != nil || len(r.Data) != leafLimit {
			t.Fatalf("%s: a reply of exactly the leaf's limit: %v", subject, err)
		}
		size.Store(leafLimit + 1)
		t0 := time.Now()
		_, err = c.Request(context.Background(), subject, nil) //natssend:reviewed retry: another request, after a success: the reply one byte larger
		var se *shim.Error
		if !errors.Is(err, shim.ErrReplyTooLarge) || !errors.As(err, &se) || !se.Remote {
			t.Fatalf("%s: one byte over the leaf's limit: %v, want a remote PAYLOAD_TOO_LARGE", subject, err)
		}
		if d := time.Since(t0); d > 2*time.Second {
			t.Errorf("%s: refused after %v: the caller waited for its deadline", subject, d)
		}
		sameLinks(t, hl, links, subject)
	}
	var got []error
	mctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for r, err := range c.RequestMany(mctx, "leaf.reply", nil) {
		if r != nil {
			t.Fatalf("RequestMany got a reply of %d bytes", len(r.Data))
		}
		got = append(got, err)
	}
	if len(got) != 1 || !errors.Is(got[0], shim.ErrReplyTooLarge) {
		t.Fatalf("RequestMany: %v, want one PAYLOAD_TOO_LARGE", got)
	}
	sameLinks(t, hl, links, "RequestMany")
}

// TestLeafCallerStreamFramesFitIt: a stream from a hub responder to a
// leaf caller sizes its frames to the leaf's limit, for a plain Client
// and for one with claim checks (which says its limit in the accept
// header instead).
func TestLeafCallerStreamFramesFitIt(t *testing.T) {
	t.Parallel()
	hl, hub, leaf := hubAndLeaf(t, false)
	body := payload(4*leafLimit+3, 17)
	ljs, err := jetstream.NewWithDomain(leaf, "hub")
	if err != nil {
		t.Fatal(err)
	}
	st, err := claimcheck.New(context.Background(), ljs, claimcheck.WithStorage(jetstream.MemoryStorage))
	if err != nil {
		t.Fatal(err)
	}
	clients := map[string]*shim.Client{
		"plain":        shim.NewClient(leaf, shim.WithTimeout(10*time.Second)),
		"claim checks": shim.NewClient(leaf, shim.WithClaimChecks(st), shim.WithTimeout(10*time.Second)),
	}
	leafService(t, hub, clients["plain"], "leaf.stream", shim.Stream(func(_ context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		_, err := w.Write(body)
		return err
	}))
	links := hl.Links()
	for name, c := range clients {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		rs, err := c.RequestStream(ctx, "leaf.stream", nil)
		if err != nil {
			cancel()
			t.Fatalf("%s: %v", name, err)
		}
		got, err := io.ReadAll(rs)
		_ = rs.Close()
		cancel()
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("%s: read %d of %d bytes: %v", name, len(got), len(body), err)
		}
		sameLinks(t, hl, links, name)
	}
}

// TestLeafCallerClaimCheckedReplyChunksFitIt: a leaf of 64 KiB whose
// caller's Store is the hub's bucket; the hub handler's 200 KiB reply is
// claim-checked against the caller's limit and stored in chunks the
// caller can read (the responder's own limit would make 128 KiB chunks,
// whose direct-get replies would close the link). The payload is deleted
// once read.
func TestLeafCallerClaimCheckedReplyChunksFitIt(t *testing.T) {
	t.Parallel()
	hl := natstest.StartHubLeaf(t,
		[]natstest.Option{natstest.MaxPayload(hubLimit), natstest.JetStream(), natstest.Domain("hub")},
		[]natstest.Option{natstest.MaxPayload(64 << 10)})
	hub, leaf := connect(t, hl.Hub.URL()), connect(t, hl.Leaf.URL())
	hjs, err := jetstream.New(hub)
	if err != nil {
		t.Fatal(err)
	}
	rst, err := claimcheck.New(context.Background(), hjs, claimcheck.WithStorage(jetstream.MemoryStorage))
	if err != nil {
		t.Fatal(err)
	}
	ljs, err := jetstream.NewWithDomain(leaf, "hub")
	if err != nil {
		t.Fatal(err)
	}
	cst, err := claimcheck.New(context.Background(), ljs, claimcheck.WithStorage(jetstream.MemoryStorage))
	if err != nil {
		t.Fatal(err)
	}
	want := payload(200<<10, 23)
	c := shim.NewClient(leaf, shim.WithClaimChecks(cst), shim.WithTimeout(10*time.Second))
	leafService(t, hub, c, "leaf.big", shim.Unary(func(context.Context, *nats.Msg) ([]byte, error) {
		return want, nil
	}, shim.ServeClaimChecks(rst)))
	links := hl.Links()
	r, err := c.Request(context.Background(), "leaf.big", nil)
	if err != nil || !bytes.Equal(r.Data, want) {
		t.Fatalf("the 200 KiB reply: %v", err)
	}
	sameLinks(t, hl, links, "claim-checked reply")
	natstest.Eventually(t, 10*time.Second, func() bool {
		status, err := rst.ObjectStore().Status(context.Background())
		return err == nil && status.Size() == 0
	}, "the reply's payload deleted")
}
