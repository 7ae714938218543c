package claimcheck_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
)

// purgeAnswer matches the stream's answer to a purge.
func purgeAnswer(f natstest.Frame) bool {
	return bytes.Contains(f.Data, []byte(`"type":"io.nats.jetstream.api.v1.stream_purge_response"`))
}

// proxied returns a Store on a connection through a proxy of srv, which
// reconnects through it, and the proxy.
func proxied(t *testing.T, srv *natstest.Server, opts ...claimcheck.Option) (*claimcheck.Store, *natstest.Proxy) {
	t.Helper()
	p := srv.Proxy(t)
	_, js := connect(t, p.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond), nats.ReconnectBufSize(-1))
	return newStore(t, js, opts...), p
}

// TestFailoverCleanupPurgesLateChunks: the connection breaks during an
// upload (the server it was on killed), and a chunk the old path had
// forwarded reaches the stream after the clean-up's purge (here the admin
// connection stores it just before the purge's answer reaches the
// Store). The clean-up asks the stream's leader whether any chunk is
// still stored and purges again: the bucket ends empty. Before, the purge
// was the last word, and the late chunks stayed until the TTL
// (TestClusterClientServerKilledMidUpload's rare leftovers).
func TestFailoverCleanupPurgesLateChunks(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	// A clean-up bound far above a loaded machine's reconnect and purge
	// (under -race beside the package's parallel tests the default 10 s
	// ran out once before the purge went through).
	st, p := proxied(t, srv, claimcheck.WithCleanupTimeout(45*time.Second))
	_, ajs := connect(t, srv.URL())
	chunks := "$O." + st.Bucket() + ".C.>"
	var mu sync.Mutex
	var chunkSubj string
	p.On(natstest.Rule{Dir: natstest.ToServer, Subject: chunks, Hook: func(f natstest.Frame) {
		mu.Lock()
		chunkSubj = f.Subject
		mu.Unlock()
	}})
	cut := p.On(natstest.Rule{Dir: natstest.ToServer, Subject: chunks, Nth: 5, Action: natstest.Cut})
	late := p.On(natstest.Rule{Dir: natstest.ToClient, Match: purgeAnswer, Hook: func(natstest.Frame) {
		mu.Lock()
		subj := chunkSubj
		mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := ajs.Publish(ctx, subj, payload(1000, 7)); err != nil { //natssend:reviewed test: the late chunk
			t.Errorf("storing the late chunk: %v", err)
		}
	}})
	err := st.PublishMsg(ctxT(t), &nats.Msg{Subject: "late", Data: payload(2<<20, 8)})
	if !errors.Is(err, claimcheck.ErrNotPublished) {
		t.Fatalf("PublishMsg across the cut = %v, want ErrNotPublished", err)
	}
	for _, tr := range []*natstest.Trigger{cut, late} {
		tr.Wait(t, 45*time.Second)
	}
	natstest.Eventually(t, 45*time.Second, func() bool { return bucketMsgs(t, st) == 0 }, "the late chunk purged")
}

// TestUnfinishedCleanupIsReported: a clean-up whose purges are never
// answered (the proxy drops every purge answer) ends at the cleanup
// timeout with an error that says so (errCleanupIncomplete): an upload's
// error matches ErrNotPublished and it, not the clean-up's deadline;
// Discard's matches it.
func TestUnfinishedCleanupIsReported(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	st, p := proxied(t, srv, claimcheck.WithCleanupTimeout(2*time.Second))
	ref, err := st.Prepare(ctxT(t), &nats.Msg{Subject: "kept", Data: payload(3*limit, 9)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	p.On(natstest.Rule{Dir: natstest.ToClient, Match: purgeAnswer, Every: true, Action: natstest.Drop})
	err = st.Discard(ctxT(t), ref)
	if !errors.Is(err, claimcheck.ErrCleanupIncomplete) {
		t.Fatalf("Discard without purge answers = %v, want ErrCleanupIncomplete", err)
	}
	p.On(natstest.Rule{Dir: natstest.ToServer, Subject: "$O." + st.Bucket() + ".C.>", Nth: 3, Action: natstest.Cut})
	err = st.PublishMsg(ctxT(t), &nats.Msg{Subject: "kept", Data: payload(1<<20, 10)})
	if !errors.Is(err, claimcheck.ErrNotPublished) || !errors.Is(err, claimcheck.ErrCleanupIncomplete) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("an upload whose clean-up cannot finish = %v; want ErrNotPublished and ErrCleanupIncomplete, not the clean-up's deadline", err)
	}
	t.Logf("%v", err)
}
