package claimcheck_test

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
)

// TestJetStreamLookupReplyLost: the link drops right after
// PublishJetStream's stream lookup (its request to $JS.API.STREAM.NAMES)
// reached the server, so its reply is lost; the client reconnects at
// once. The lookup is a hint with a bound of its own: the publish of a
// message that fits goes on without it, well within the caller's deadline.
func TestJetStreamLookupReplyLost(t *testing.T) {
	t.Parallel()
	for _, buf := range []bool{true, false} {
		t.Run(map[bool]string{true: "buf", false: "nobuf"}[buf], func(t *testing.T) {
			srv := startServer(t)
			p := srv.Proxy(t)
			opts := []nats.Option{nats.MaxReconnects(-1), nats.ReconnectWait(20 * time.Millisecond)}
			if !buf {
				opts = append(opts, nats.ReconnectBufSize(-1))
			}
			nc, js := connect(t, p.URL(), opts...)
			st := newStore(t, js, claimcheck.WithBucket("adv"))
			createStream(t, js, jetstream.StreamConfig{Name: "ADV", Subjects: []string{"adv.cut"}, Storage: jetstream.MemoryStorage})
			var reply atomic.Value
			reply.Store("")
			p.On(natstest.Rule{Dir: natstest.ToServer, Subject: "$JS.API.STREAM.NAMES", Hook: func(f natstest.Frame) { reply.Store(f.Reply) }})
			p.On(natstest.Rule{Dir: natstest.ToClient, Op: "MSG", When: natstest.Before, Action: natstest.Cut,
				Match: func(f natstest.Frame) bool { r := reply.Load().(string); return r != "" && f.Subject == r }})
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
			defer cancel()
			t0 := time.Now()
			_, err := st.PublishJetStream(ctx, &nats.Msg{Subject: "adv.cut", Data: []byte("small")})
			el := time.Since(t0)
			if nc.Stats().Reconnects == 0 {
				t.Fatal("the link was not cut")
			}
			if err != nil || el > 4*time.Second {
				t.Errorf("a 5-byte PublishJetStream across a momentary reconnect: %v after %v", err, el)
			}
		})
	}
}

// startOpts starts an embedded server (JetStream, the test max_payload)
// with opts adjusted by adjust.
func startOpts(t *testing.T, adjust func(*server.Options)) *server.Server {
	t.Helper()
	opts := &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), MaxPayload: limit, NoLog: true, NoSigs: true}
	if adjust != nil {
		adjust(opts)
	}
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	t.Cleanup(s.Shutdown)
	return s
}

// startMapped starts a server whose global account maps src to dst.
func startMapped(t *testing.T, src, dst string) *server.Server {
	t.Helper()
	s := startOpts(t, nil)
	if err := s.GlobalAccount().AddMapping(src, dst); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestJetStreamMappedSubjectRefusedIsClaimChecked: PublishJetStream,
// "When the stream still refuses the message as too large
// (jetstream.ErrStreamMessageExceedsMaximum: nothing was stored), it is
// sent once more, as a claim check." With an account subject mapping in
// front of the stream, the Store's lookup of the stream by subject finds
// none; the stream's refusal itself bounds its limit, so the message is
// sent again as a claim check.
func TestJetStreamMappedSubjectRefusedIsClaimChecked(t *testing.T) {
	t.Parallel()
	s := startMapped(t, "in.a", "st.a")
	_, js := connect(t, s.ClientURL())
	st := newStore(t, js)
	stream := createStream(t, js, jetstream.StreamConfig{Name: "ST", Subjects: []string{"st.>"}, MaxMsgSize: 1024, Storage: jetstream.MemoryStorage})
	body := payload(2048, 5) // fits max_payload (64 KiB), not the stream's 1 KiB
	ack, err := st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "in.a", Data: body})
	if err != nil {
		t.Fatalf("PublishJetStream of 2 KiB through a mapping to a 1 KiB stream: %v (ErrNotPublished %v, exceeds max %v)",
			err, errors.Is(err, claimcheck.ErrNotPublished), errors.Is(err, jetstream.ErrStreamMessageExceedsMaximum))
	}
	got := lastMsg(t, stream)
	if got.Sequence != ack.Sequence || got.Header.Get(claimcheck.HeaderRef) == "" {
		t.Fatalf("stored %v, want a claim check", got.Header)
	}
	data, err := st.Resolve(ctxT(t), &nats.Msg{Subject: "in.a", Header: got.Header})
	if err != nil || !bytes.Equal(data, body) {
		t.Fatalf("Resolve: %v", err)
	}
}

// startNoNames starts a server whose user u/p may publish anywhere but on
// $JS.API.STREAM.NAMES (it needs no stream lookup by subject to publish to
// a stream).
func startNoNames(t *testing.T) *server.Server {
	t.Helper()
	return startOpts(t, func(o *server.Options) {
		o.Users = []*server.User{{Username: "u", Password: "p", Permissions: &server.Permissions{
			Publish: &server.SubjectPermission{Allow: []string{">"}, Deny: []string{"$JS.API.STREAM.NAMES"}}}}}
	})
}

// TestJetStreamNoLookupPermission: a user who may not look streams up
// (the denied request gets no answer) publishes to a stream: the first
// PublishJetStream waits at most the lookup's own bound, the ones after it
// make no lookup, and a message too large for the stream still becomes a
// claim check (the stream's refusal bounds its limit).
func TestJetStreamNoLookupPermission(t *testing.T) {
	t.Parallel()
	s := startNoNames(t)
	_, js := connect(t, s.ClientURL(), nats.UserInfo("u", "p"), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	st := newStore(t, js)
	createStream(t, js, jetstream.StreamConfig{Name: "ST", Subjects: []string{"st.>"}, Storage: jetstream.MemoryStorage})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := js.Publish(ctx, "st.a", []byte("plain jetstream")); err != nil {
		t.Fatalf("plain jetstream publish: %v", err)
	}
	for i, bound := range []time.Duration{2 * time.Second, 300 * time.Millisecond} {
		t0 := time.Now()
		_, err := st.PublishJetStream(ctx, &nats.Msg{Subject: "st.a", Data: []byte("small")})
		if el := time.Since(t0); err != nil || el > bound {
			t.Fatalf("PublishJetStream %d of 5 bytes: %v after %v (bound %v)", i+1, err, el, bound)
		}
	}
	stream, err := js.Stream(ctx, "ST")
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	small := jetstream.StreamConfig{Name: "ST", Subjects: []string{"st.>"}, Storage: jetstream.MemoryStorage, MaxMsgSize: 1024}
	if _, err := js.UpdateStream(ctx, small); err != nil {
		t.Fatal(err)
	}
	body := payload(2048, 9)
	if _, err := st.PublishJetStream(ctx, &nats.Msg{Subject: "st.a", Data: body}); err != nil {
		t.Fatalf("2 KiB to a 1 KiB stream without a lookup: %v", err)
	}
	got := lastMsg(t, stream)
	if got.Header.Get(claimcheck.HeaderRef) == "" {
		t.Fatalf("stored %v, want a claim check", got.Header)
	}
}
