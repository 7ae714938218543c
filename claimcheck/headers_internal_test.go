package claimcheck

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/internal/wire"
)

// TestJetStreamHeadersExact proves that jsHeaders computes exactly the
// header block nats.go sends for every header-adding PublishOpt (alone,
// combined, and overriding a caller's header of the same key), by
// comparing with what a subscriber on the subject receives from a real
// jetstream publish, and that the dry run itself sends nothing. When a
// nats.go upgrade changes how options become headers, this test fails.
func TestJetStreamHeadersExact(t *testing.T) {
	nc, js, st, ctx := internalStore(t)
	// A stream that accepts every option's headers, so the publishes are
	// real ones; the wire copy is taken from a plain subscriber.
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "H", Subjects: []string{"h.>"}, Storage: jetstream.MemoryStorage,
		AllowMsgTTL: true, AllowMsgSchedules: true,
	}); err != nil {
		t.Fatal(err)
	}
	wire2 := make(chan *nats.Msg, 16)
	if _, err := nc.ChanSubscribe("h.>", wire2); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		name string
		hdr  nats.Header
		opts []jetstream.PublishOpt
	}{
		{"none", nil, nil},
		{"msg id", nil, []jetstream.PublishOpt{jetstream.WithMsgID("id-1")}},
		{"msg id overrides caller's", nats.Header{jetstream.MsgIDHeader: {"a-much-longer-caller-supplied-id"}}, []jetstream.PublishOpt{jetstream.WithMsgID("x")}},
		{"expect stream", nil, []jetstream.PublishOpt{jetstream.WithExpectStream("H")}},
		{"expect last seq", nil, []jetstream.PublishOpt{jetstream.WithExpectLastSequence(12345)}},
		{"expect last seq per subject", nil, []jetstream.PublishOpt{jetstream.WithExpectLastSequencePerSubject(0)}},
		{"expect last seq for subject", nil, []jetstream.PublishOpt{jetstream.WithExpectLastSequenceForSubject(7, "h.other")}},
		{"expect last msg id", nil, []jetstream.PublishOpt{jetstream.WithExpectLastMsgID("prev")}},
		{"ttl", nil, []jetstream.PublishOpt{jetstream.WithMsgTTL(90 * time.Second)}},
		{"schedule at", nil, []jetstream.PublishOpt{jetstream.WithScheduleAt(at), jetstream.WithScheduleTarget("h.target")}},
		{"schedule every", nil, []jetstream.PublishOpt{jetstream.WithScheduleEvery(time.Minute), jetstream.WithScheduleTarget("h.target"), jetstream.WithScheduleTTL(time.Hour)}},
		{"schedule cron", nil, []jetstream.PublishOpt{jetstream.WithScheduleCron("0 0 * * * *"), jetstream.WithScheduleTarget("h.target"), jetstream.WithScheduleTimeZone("Europe/Amsterdam")}},
		{"schedule source rollup", nil, []jetstream.PublishOpt{jetstream.WithScheduleAt(at), jetstream.WithScheduleTarget("h.target"), jetstream.WithScheduleSource("h.src"), jetstream.WithScheduleRollup()}},
		{"schedule ttl never", nil, []jetstream.PublishOpt{jetstream.WithScheduleAt(at), jetstream.WithScheduleTarget("h.target"), jetstream.WithScheduleTTLNever()}},
		{"retry options add nothing", nil, []jetstream.PublishOpt{jetstream.WithRetryAttempts(0), jetstream.WithRetryWait(time.Millisecond)}},
		{"everything", nats.Header{"App": {"v1", "v2"}}, []jetstream.PublishOpt{
			jetstream.WithMsgID("id-9"), jetstream.WithExpectStream("H"), jetstream.WithExpectLastMsgID("id-8"),
			jetstream.WithExpectLastSequence(99), jetstream.WithExpectLastSequenceForSubject(3, "h.x"), jetstream.WithMsgTTL(time.Hour)}},
	}
	for i, c := range cases {
		subject := fmt.Sprintf("h.%d", i)
		m := &nats.Msg{Subject: subject, Header: cloneHeader(c.hdr), Data: []byte("data")}
		before := nc.Stats().OutMsgs
		got, err := st.jsHeaders(m, c.opts)
		if err != nil {
			t.Fatalf("%s: jsHeaders: %v", c.name, err)
		}
		if after := nc.Stats().OutMsgs; after != before {
			t.Fatalf("%s: the dry run sent %d messages", c.name, after-before)
		}
		if fmt.Sprint(m.Header) != fmt.Sprint(c.hdr) {
			t.Fatalf("%s: jsHeaders modified the caller's header: %v", c.name, m.Header)
		}
		// The real publish; the stream may refuse some expectations, the
		// message is on the wire either way.
		_, _ = js.PublishMsg(ctx, &nats.Msg{Subject: subject, Header: cloneHeader(c.hdr), Data: []byte("data")}, append(c.opts, jetstream.WithRetryAttempts(0))...)
		var sent *nats.Msg
		select {
		case sent = <-wire2:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: nothing on the wire", c.name)
		}
		if g, w := wire.HeaderSize(got), wire.HeaderSize(sent.Header); g != w {
			t.Errorf("%s: computed header block %d bytes, sent %d bytes\ncomputed %v\nsent     %v", c.name, g, w, got, sent.Header)
		}
	}
	// An invalid option is reported as the real publish reports it.
	if _, err := st.jsHeaders(&nats.Msg{Subject: "h.bad"}, []jetstream.PublishOpt{jetstream.WithStallWait(time.Second)}); err == nil {
		t.Fatal("jsHeaders accepted a stall wait on a synchronous publish")
	}
}

func TestChunkSize(t *testing.T) {
	cases := []struct {
		limit int64
		max   int
		want  int
	}{
		{64 << 10, DefaultMaxChunkSize, 64<<10 - 512},
		{1 << 20, DefaultMaxChunkSize, DefaultMaxChunkSize},
		{1024, DefaultMaxChunkSize, 1024 - 64},
		{1, DefaultMaxChunkSize, 1},
	}
	for _, c := range cases {
		if got := chunkSize(c.limit, c.max); got != c.want {
			t.Errorf("chunkSize(%d, %d) = %d, want %d", c.limit, c.max, got, c.want)
		}
	}
}

// TestReadBatch: Resolve keeps about resolveWindowBytes requested ahead,
// at least resolveWindow and at most maxReadWindow chunks; Open one chunk
// whatever the chunk size.
func TestReadBatch(t *testing.T) {
	cases := []struct {
		window, wbytes int
		opts           *jetstream.ObjectMetaOptions
		want           int
	}{
		{resolveWindow, resolveWindowBytes, &jetstream.ObjectMetaOptions{ChunkSize: 1 << 20}, resolveWindow},
		{resolveWindow, resolveWindowBytes, &jetstream.ObjectMetaOptions{ChunkSize: 4 << 20}, resolveWindow},
		{resolveWindow, resolveWindowBytes, &jetstream.ObjectMetaOptions{ChunkSize: 64<<10 - 512}, 129},
		{resolveWindow, resolveWindowBytes, &jetstream.ObjectMetaOptions{ChunkSize: 1024}, maxReadWindow},
		{resolveWindow, resolveWindowBytes, nil, resolveWindowBytes / defaultChunkSize},
		{resolveWindow, resolveWindowBytes, &jetstream.ObjectMetaOptions{}, resolveWindowBytes / defaultChunkSize},
		{openWindow, 0, &jetstream.ObjectMetaOptions{ChunkSize: 1024}, openWindow},
	}
	for _, c := range cases {
		r := &objReader{window: c.window, wbytes: c.wbytes, info: &jetstream.ObjectInfo{ObjectMeta: jetstream.ObjectMeta{Opts: c.opts}}}
		if got := r.batch(); got != c.want {
			t.Errorf("batch(window %d, %d bytes, opts %+v) = %d, want %d", c.window, c.wbytes, c.opts, got, c.want)
		}
	}
}

func TestNames(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		n := newName()
		if !validName(n) || seen[n] {
			t.Fatalf("newName() = %q (valid %v, repeated %v)", n, validName(n), seen[n])
		}
		seen[n] = true
	}
	for _, bad := range []string{"", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "aaaaaaaaaaaaaaaaaaaaaaaaa1", "aaaaaaaaaaaaaaaaaaaaaaaaa", "../aaaaaaaaaaaaaaaaaaaaaaa"} {
		if validName(bad) {
			t.Errorf("validName(%q) = true", bad)
		}
	}
}

// internalStore starts a server (max_payload 64 KiB, JetStream), connects,
// and makes a Store with a memory bucket, for the package's internal
// tests. The context lasts a minute.
func internalStore(t *testing.T) (*nats.Conn, jetstream.JetStream, *Store, context.Context) {
	t.Helper()
	srv := natstest.Start(t, natstest.MaxPayload(64<<10), natstest.JetStream())
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	st, err := New(ctx, js, WithStorage(jetstream.MemoryStorage))
	if err != nil {
		t.Fatal(err)
	}
	return nc, js, st, ctx
}
