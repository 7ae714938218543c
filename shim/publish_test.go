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

func TestPublishFitsUnchangedOverAsClaimCheck(t *testing.T) {
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
	if _, err := js.ObjectStore(context.Background(), claimcheck.DefaultBucket); !errors.Is(err, jetstream.ErrBucketNotFound) {
		t.Fatalf("a fitting message must not touch the object store (bucket lookup: %v)", err)
	}

	over := append(bytes.Clone(fit), 0xff)
	if err := shim.PublishMsg(nc, &nats.Msg{Subject: "events", Header: h, Data: over}); err != nil {
		t.Fatalf("one byte over: %v", err)
	}
	ref, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if ref.Header.Get(claimcheck.HeaderRef) == "" || len(ref.Data) != 0 || ref.Header.Get("Trace-Id") != "abc" {
		t.Fatalf("one byte over must travel as a claim check with the caller's headers: %v %d bytes", ref.Header, len(ref.Data))
	}
	store, err := claimcheck.New(context.Background(), js)
	if err != nil {
		t.Fatal(err)
	}
	body, err := store.Resolve(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, over) {
		t.Fatal("resolved body differs")
	}
	if nc.IsClosed() {
		t.Fatal("connection closed")
	}
}

func TestPublishWithoutJetStreamRefuses(t *testing.T) {
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

func TestPublishRefusesAboveClaimCheckMaximum(t *testing.T) {
	const limit = 64 << 10
	s := natstest.Start(t, natstest.MaxPayload(limit), natstest.JetStream())
	nc := connect(t, s.URL())
	err := shim.Publish(nc, "events", make([]byte, claimcheck.MaxSize+1))
	var se *shim.Error
	if !errors.As(err, &se) || !errors.Is(err, shim.ErrPayloadTooLarge) || !errors.Is(err, claimcheck.ErrTooLarge) ||
		shim.Classify(err) != shim.OutcomeNotRun || se.Limit != limit {
		t.Fatalf("above 256 MiB: want a not-sent PAYLOAD_TOO_LARGE wrapping claimcheck.ErrTooLarge, got %v", err)
	}
	err = shim.PublishMsg(nc, &nats.Msg{Subject: "events", Header: nats.Header{claimcheck.HeaderRef: {"forged"}}, Data: make([]byte, limit+1)})
	if !errors.As(err, &se) || se.Code != shim.CodeInvalidArgument || shim.Classify(err) != shim.OutcomeNotRun {
		t.Fatalf("a message already carrying a claim check header: got %v", err)
	}
}
