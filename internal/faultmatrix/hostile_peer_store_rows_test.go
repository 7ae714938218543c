package faultmatrix_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
)

// The hostile peer of a Store's paths: publish (PublishMsg,
// PublishJetStream), read and delete.

// replacedPayload: a peer with write access to the bucket that learns a
// reference overwrites the object under its name, with the subject the
// reference names: the reader gets the peer's bytes (the reference
// carries no digest). A documented "can": bucket write access is trust.
func replacedPayload(t *testing.T) {
	e := newSecEnv(t, map[string]perms{peerUser: everything})
	ref, _ := storedEvent(t, e)
	js, err := jetstream.New(e.rawAs(peerUser))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	obs, err := js.ObjectStore(ctx, bucket)
	if err != nil {
		t.Fatal(err)
	}
	forged := payload(bigSize, 99)
	meta := jetstream.ObjectMeta{Name: ref.Header.Get(claimcheck.HeaderRef), Metadata: map[string]string{"claim-check-subject": ref.Subject},
		Opts: &jetstream.ObjectMetaOptions{ChunkSize: 8 << 10}}
	if _, err := obs.Put(ctx, meta, bytes.NewReader(forged)); err != nil {
		t.Fatal(err)
	}
	got, err := e.ast.Resolve(ctx, ref)
	if err != nil || !bytes.Equal(got, forged) {
		t.Errorf("read %d bytes, %v; the row documents that a bucket writer replaces the payload", len(got), err)
	}
}

// squattedMsgID: a peer that may publish to the stream's subject stores
// a message first with the publisher's Nats-Msg-Id: the publisher's
// PublishJetStream is acknowledged as a duplicate, its payload deleted,
// and the stream keeps the peer's message. A documented "can": JetStream
// de-duplicates by ID within the stream, whoever published.
func squattedMsgID(t *testing.T) {
	e := newSecEnv(t, map[string]perms{peerUser: {pubAllow: []string{"ev.>"}, subAllow: []string{"_INBOX.>"}}})
	ev := createEV(t, e.admin)
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	pjs, err := jetstream.New(e.rawAs(peerUser))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pjs.Publish(ctx, "ev.data", []byte("squat"), jetstream.WithMsgID("m-1")); err != nil { //natssend:reviewed a hostile peer's raw publish, small
		t.Fatal(err)
	}
	ack, err := e.ast.PublishJetStream(ctx, &nats.Msg{Subject: "ev.data", Data: payload(bigSize, 6)}, jetstream.WithMsgID("m-1"))
	if err != nil || !ack.Duplicate {
		t.Errorf("ack %+v, %v; the row documents a duplicate", ack, err)
	}
	if info, err := ev.Info(ctx); err != nil || info.State.Msgs != 1 {
		t.Errorf("the stream: %v, %v; want the peer's one message", info, err)
	}
	checkLeftIn(t, e.ast, 0)
}

// foreignDelete: a peer with no bucket access publishes on the subject a
// service reads with DeleteAfterRead a message carrying the reference of
// another user's payload (stored for another subject): the read refuses
// it and the payload is not deleted (the service is no deputy).
func foreignDelete(t *testing.T) {
	e := newSecEnv(t, map[string]perms{peerUser: {pubAllow: []string{"ev.>"}, subAllow: []string{"_INBOX.>"}}})
	ref, data := storedEvent(t, e)
	errs := make(chan error, 4)
	got := make(chan []byte, 4)
	st := store(t, e.as(""))
	if _, err := st.Subscribe("ev.other", func(m *nats.Msg) { got <- m.Data }, func(_ *nats.Msg, err error) { errs <- err },
		claimcheck.DeleteAfterRead()); err != nil {
		t.Fatal(err)
	}
	_ = st.Conn().Flush()
	peer := e.rawAs(peerUser)
	if err := peer.PublishMsg(&nats.Msg{Subject: "ev.other", Header: ref.Header}); err != nil { //natssend:reviewed a hostile peer's forged reference, small
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		if !errors.Is(err, claimcheck.ErrSubjectMismatch) {
			t.Errorf("onErr: %v; want ErrSubjectMismatch", err)
		}
	case b := <-got:
		t.Errorf("the handler got %d bytes of a payload stored for another subject", len(b))
	case <-time.After(settle):
		t.Error("neither the handler nor onErr was called")
	}
	intact(t, e.ast, ref, data)
}

// foreignDiscard: Store.Discard given a reference copied onto another
// subject refuses it and deletes nothing.
func foreignDiscard(t *testing.T) {
	e := newSecEnv(t, nil)
	ref, data := storedEvent(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	err := store(t, e.as("")).Discard(ctx, &nats.Msg{Subject: "ev.other", Header: ref.Header})
	if !errors.Is(err, claimcheck.ErrSubjectMismatch) {
		t.Errorf("Discard: %v; want ErrSubjectMismatch", err)
	}
	intact(t, e.ast, ref, data)
}

func hostileStoreRows() []secRow {
	return []secRow{
		{path: pPublishMsg, column: columnHostile, run: replacedPayload,
			name: "(can) a bucket writer that learns a reference replaces its payload: the reader gets the writer's bytes"},
		{path: pPublishJS, column: columnHostile, run: squattedMsgID,
			name: "(can) a peer that may publish to the stream squats the publisher's message ID: a duplicate, the payload deleted"},
		{path: pDelete, column: columnHostile, run: foreignDelete,
			name: "DeleteAfterRead: a message carrying another subject's reference is refused, the payload not deleted"},
		{path: pDelete, column: columnHostile, run: foreignDiscard,
			name: "Discard: a reference copied onto another subject is refused, the payload not deleted"},
	}
}
