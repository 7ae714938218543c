package shim_test

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
	"github.com/natssend/natssend/shim"
)

// TestPublishFitsOrRefusesNeverStores: the package-level Publish functions
// make no claim check. At the limit (header block included) a message
// arrives unchanged; one byte over, every Publish function refuses it
// before anything is written (PAYLOAD_TOO_LARGE, not run), nothing
// arrives, no bucket is made, and the connection stays up. This is what
// nc.Publish does, so natssend-lint -fix keeps a service's behaviour.
func TestPublishFitsOrRefusesNeverStores(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	s := natstest.Start(t, natstest.MaxPayload(limit), natstest.JetStream())
	nc := connect(t, s.URL())
	sub, err := nc.SubscribeSync("events")
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	h := nats.Header{"Trace-Id": {"abc"}}
	fit := make([]byte, limit-shim.HeaderSize(h))
	for i := range fit {
		fit[i] = byte(i)
	}
	if err := shim.PublishMsg(nc, &nats.Msg{Subject: "events", Header: h, Data: fit}); err != nil {
		t.Fatalf("exactly at the limit: %v", err)
	}
	got, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Data, fit) || got.Header.Get(claimcheck.HeaderRef) != "" {
		t.Fatal("a fitting message must arrive unchanged")
	}

	ctx := context.Background()
	over := append(bytes.Clone(fit), 0xff)
	for name, publish := range map[string]func() error{
		"PublishMsg": func() error { return shim.PublishMsg(nc, &nats.Msg{Subject: "events", Header: h, Data: over}) },
		"PublishMsgContext": func() error {
			return shim.PublishMsgContext(ctx, nc, &nats.Msg{Subject: "events", Header: h, Data: over})
		},
		"Publish":            func() error { return shim.Publish(nc, "events", make([]byte, limit+1)) },
		"PublishContext":     func() error { return shim.PublishContext(ctx, nc, "events", make([]byte, limit+1)) },
		"Publish of 300 MiB": func() error { return shim.Publish(nc, "events", make([]byte, 300<<20)) },
	} {
		err := publish()
		var se *shim.Error
		if !errors.As(err, &se) || se.Code != shim.CodePayloadTooLarge || se.Limit != limit || se.Sent ||
			!errors.Is(err, shim.ErrPayloadTooLarge) || !errors.Is(err, nats.ErrMaxPayload) || shim.Classify(err) != shim.OutcomeNotRun {
			t.Errorf("%s one byte over the limit: want a not-sent PAYLOAD_TOO_LARGE against %d bytes, got %v", name, limit, err)
		}
	}
	if err := nc.Flush(); err != nil || nc.IsClosed() {
		t.Fatalf("connection not usable: %v", err)
	}
	if m, err := sub.NextMsg(100 * time.Millisecond); err == nil {
		t.Fatalf("a refused message arrived: %d bytes, headers %v", len(m.Data), m.Header)
	}
	if _, err := js.ObjectStore(ctx, claimcheck.DefaultBucket); !errors.Is(err, jetstream.ErrBucketNotFound) {
		t.Fatalf("Publish must never make a bucket (bucket lookup: %v)", err)
	}
	streams := js.StreamNames(ctx)
	for n := range streams.Name() {
		t.Errorf("Publish made the stream %q", n)
	}
	if err := streams.Err(); err != nil {
		t.Fatal(err)
	}
}

func TestPublishWithoutJetStreamRefuses(t *testing.T) {
	t.Parallel()
	const limit = 1024
	s := natstest.Start(t, natstest.MaxPayload(limit))
	nc := connect(t, s.URL())
	err := shim.Publish(nc, "events", make([]byte, limit+1))
	var se *shim.Error
	if !errors.As(err, &se) || !errors.Is(err, shim.ErrPayloadTooLarge) || se.Limit != limit || se.Size != limit+1 || shim.Classify(err) != shim.OutcomeNotRun {
		t.Fatalf("want a not-sent PAYLOAD_TOO_LARGE, got %v", err)
	}
	if err := nc.Flush(); err != nil || nc.IsClosed() {
		t.Fatalf("connection not usable: %v", err)
	}
	if err := shim.Publish(nc, "events", make([]byte, limit)); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
}

func TestPublishStateDroppedWhenConnectionsClose(t *testing.T) {
	s := natstest.Start(t)
	before := shim.RegistrySize()
	for range 5 {
		nc := connect(t, s.URL())
		if err := shim.Publish(nc, "x", []byte("y")); err != nil {
			t.Fatal(err)
		}
		nc.Close()
	}
	nc := connect(t, s.URL())
	if err := shim.Publish(nc, "x", []byte("y")); err != nil {
		t.Fatal(err)
	}
	if got := shim.RegistrySize(); got > before+1 {
		t.Fatalf("registry holds %d connections, want at most %d: closed connections leak", got, before+1)
	}
}
