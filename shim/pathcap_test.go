package shim_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// TestCapPayloadKeepsTheLeafnodeLink: a hub with a 1 MiB max_payload, a
// leaf with 256 KiB. The leaf closes the whole leafnode link for one
// message over its limit (the control, sent with raw nats.go, shows it on
// this very topology). With CapPayload set to the leaf's limit on a hub
// connection, every natssend sender on it refuses, at the exact byte,
// what would not pass (Publish, a request, a handler's reply) or sizes
// its claim check's chunks to pass, and the link is never reset.
func TestCapPayloadKeepsTheLeafnodeLink(t *testing.T) {
	t.Parallel()
	hl, hub, leaf := hubAndLeaf(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	got, err := leaf.SubscribeSync("edge.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := leaf.Flush(); err != nil {
		t.Fatal(err)
	}
	// The subscription's interest reaches the hub over the link.
	natstest.Eventually(t, 10*time.Second, func() bool {
		_ = hub.Publish("edge.probe", nil)
		m, err := got.NextMsg(50 * time.Millisecond)
		return err == nil && m.Subject == "edge.probe"
	}, "the leaf's interest on the hub")
	// The probes still on their way arrive before a marker sent after them
	// on the same connection.
	if err := hub.Publish("edge.drained", nil); err != nil {
		t.Fatal(err)
	}
	for {
		m, err := got.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("the marker sent after the probes did not arrive: %v", err)
		}
		if m.Subject == "edge.drained" {
			break
		}
	}
	links := hl.Links()

	if err := shim.CapPayload(hub, 0); !errors.Is(err, shim.ErrInvalidOption) || shim.Classify(err) != shim.OutcomeNotRun {
		t.Errorf("CapPayload(0): %v", err)
	}
	if err := shim.CapPayload(nil, 1); !errors.Is(err, shim.ErrInvalidOption) {
		t.Errorf("CapPayload(nil, 1): %v", err)
	}
	if err := shim.CapPayload(hub, leafLimit); err != nil {
		t.Fatal(err)
	}

	// Publish: at the leaf's limit it passes, one byte over it is refused.
	if err := shim.Publish(hub, "edge.fit", make([]byte, leafLimit)); err != nil {
		t.Fatalf("at the path limit: %v", err)
	}
	if m, err := got.NextMsg(5 * time.Second); err != nil || len(m.Data) != leafLimit {
		t.Fatalf("the message at the path limit did not arrive: %v", err)
	}
	for name, send := range map[string]func() error{
		"Publish": func() error { return shim.Publish(hub, "edge.over", make([]byte, leafLimit+1)) },
		"PublishMsgContext": func() error {
			return shim.PublishMsgContext(ctx, hub, &nats.Msg{Subject: "edge.over", Data: make([]byte, 512<<10)})
		},
		"Request": func() error {
			_, err := shim.NewClient(hub).Request(ctx, "edge.rpc", make([]byte, leafLimit+1))
			return err
		},
	} {
		err := send()
		var se *shim.Error
		if !errors.As(err, &se) || se.Code != shim.CodePayloadTooLarge || se.Limit != leafLimit || shim.Classify(err) != shim.OutcomeNotRun {
			t.Errorf("%s over the path limit: %v; want PAYLOAD_TOO_LARGE against %d bytes, not run", name, err, leafLimit)
		}
	}

	// A handler on the capped hub connection answering a leaf caller: its
	// reply over the path limit is a PAYLOAD_TOO_LARGE error reply.
	if _, err := shim.Serve(hub, "svc.big", shim.Unary(func(context.Context, *nats.Msg) ([]byte, error) {
		return make([]byte, 512<<10), nil
	})); err != nil {
		t.Fatal(err)
	}
	if err := hub.Flush(); err != nil {
		t.Fatal(err)
	}
	natstest.Eventually(t, 10*time.Second, func() bool {
		_, err := shim.NewClient(leaf, shim.WithTimeout(time.Second)).Request(ctx, "svc.big", nil)
		return !errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, nats.ErrTimeout)
	}, "the hub's service seen from the leaf")
	if _, err := shim.NewClient(leaf).Request(ctx, "svc.big", nil); !errors.Is(err, shim.ErrReplyTooLarge) {
		t.Errorf("a reply over the path limit: %v; want a PAYLOAD_TOO_LARGE error reply", err)
	}

	// A claim check published on the capped connection: chunks within the
	// path limit, the reference reaches the leaf.
	js, err := jetstream.New(hub)
	if err != nil {
		t.Fatal(err)
	}
	st, err := claimcheck.New(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PublishMsg(ctx, &nats.Msg{Subject: "edge.cc", Data: make([]byte, 3<<20)}); err != nil {
		t.Fatal(err)
	}
	ref, err := got.NextMsg(5 * time.Second)
	if err != nil || ref.Header.Get(claimcheck.HeaderRef) == "" {
		t.Fatalf("the reference did not arrive: %v", err)
	}
	info, err := st.ObjectStore().GetInfo(ctx, ref.Header.Get(claimcheck.HeaderRef))
	if err != nil {
		t.Fatal(err)
	}
	if cs := info.Opts.ChunkSize; cs == 0 || cs > leafLimit {
		t.Errorf("chunks of %d bytes, want at most the path limit %d", cs, leafLimit)
	}

	// A stream from a responder on the capped hub connection to a leaf
	// caller: frames within the path limit.
	body := bytes.Repeat([]byte("natssend"), (2<<20)/8)
	if _, err := shim.Serve(hub, "svc.stream", shim.Stream(func(_ context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		_, err := w.Write(body)
		return err
	})); err != nil {
		t.Fatal(err)
	}
	if err := hub.Flush(); err != nil {
		t.Fatal(err)
	}
	natstest.Eventually(t, 10*time.Second, func() bool {
		rs, err := shim.NewClient(leaf).RequestStream(ctx, "svc.stream", nil)
		if err != nil {
			return false
		}
		data, err := io.ReadAll(rs)
		if err != nil || !bytes.Equal(data, body) {
			t.Fatalf("the stream: %d bytes, %v", len(data), err)
		}
		return true
	}, "a stream from the hub to the leaf")

	if now := hl.Links(); !slices.Equal(now, links) {
		t.Fatalf("the leafnode link was reset (links %v, then %v)", links, now)
	}

	// The control: the same message sent with raw nats.go resets the link.
	raw := connect(t, hl.Hub.URL())
	if err := raw.Publish("edge.raw", make([]byte, 512<<10)); err != nil {
		t.Fatal(err)
	}
	if err := raw.Flush(); err != nil {
		t.Fatal(err)
	}
	natstest.Eventually(t, 10*time.Second, func() bool { return !slices.Equal(hl.Links(), links) }, "the raw message to reset the link (the control)")
}

// The limits of hubAndLeaf's servers.
const hubLimit, leafLimit = 1 << 20, 256 << 10

// hubAndLeaf starts a hub (hubLimit, JetStream in domain "hub") and a
// leaf connected to it (leafLimit; with leafJS, JetStream in domain
// "leaf"), and a connection to each.
func hubAndLeaf(t *testing.T, leafJS bool) (hl *natstest.HubLeaf, hub, leaf *nats.Conn) {
	t.Helper()
	leafOpts := []natstest.Option{natstest.MaxPayload(leafLimit)}
	if leafJS {
		leafOpts = append(leafOpts, natstest.JetStream(), natstest.Domain("leaf"))
	}
	hl = natstest.StartHubLeaf(t, []natstest.Option{natstest.MaxPayload(hubLimit), natstest.JetStream(), natstest.Domain("hub")}, leafOpts)
	return hl, connect(t, hl.Hub.URL()), connect(t, hl.Leaf.URL())
}
