package claimcheck_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
)

// TestCloseReleasesPublisher: a Store's first upload leaves a reply
// subscription on the connection; Close removes it, so Stores created and
// closed one after another on a long-lived connection leave nothing
// behind. After Close the publish methods refuse with ErrClosed (nothing
// published) while Resolve keeps working.
func TestCloseReleasesPublisher(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	ch := make(chan *nats.Msg, 4)
	if _, err := nc.ChanSubscribe("cl", ch); err != nil {
		t.Fatal(err)
	}
	var baseline int
	var ref *nats.Msg
	var body []byte
	for i := 0; i < 3; i++ {
		st := newStore(t, js)
		if i > 0 {
			// The previous round's Resolve stops its consumer's
			// subscription asynchronously (jetstream's Stop): let it go
			// before counting.
			natstest.Eventually(t, 10*time.Second, func() bool { return nc.NumSubscriptions() == baseline }, fmt.Sprintf("%d subscriptions as after the first round", baseline))
		}
		before := nc.NumSubscriptions()
		body = payload(2*limit, uint64(50+i))
		if err := st.PublishMsg(ctxT(t), &nats.Msg{Subject: "cl", Data: body}); err != nil {
			t.Fatal(err)
		}
		ref = recv(t, ch)
		if nc.NumSubscriptions() <= before {
			t.Fatalf("round %d: an upload added no subscription (%d before, %d after): the test would prove nothing", i, before, nc.NumSubscriptions())
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		after := nc.NumSubscriptions()
		if i == 0 {
			// The first round may leave the connection's shared request
			// subscription (JetStream API requests), which is not the
			// Store's.
			baseline = after
		} else if after != baseline {
			t.Fatalf("round %d: %d subscriptions after Close, want %d as after the first round", i, after, baseline)
		}
		if after != before && i > 0 {
			t.Fatalf("round %d: %d subscriptions after Close, %d before the upload", i, after, before)
		}

		// Closed: publishing is refused, nothing published; resolving works.
		err := st.PublishMsg(ctxT(t), &nats.Msg{Subject: "cl", Data: body})
		if !errors.Is(err, claimcheck.ErrClosed) || !errors.Is(err, claimcheck.ErrNotPublished) {
			t.Fatalf("PublishMsg after Close = %v, want ErrClosed and ErrNotPublished", err)
		}
		if _, err := st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "cl", Data: []byte("x")}); !errors.Is(err, claimcheck.ErrClosed) {
			t.Fatalf("PublishJetStream after Close = %v, want ErrClosed", err)
		}
		if _, err := st.Prepare(ctxT(t), &nats.Msg{Subject: "cl", Data: body}, 0); !errors.Is(err, claimcheck.ErrClosed) {
			t.Fatalf("Prepare after Close = %v, want ErrClosed", err)
		}
		noMsg(t, ch)
		if data, err := st.Resolve(ctxT(t), ref); err != nil || !bytes.Equal(data, body) {
			t.Fatalf("Resolve after Close = %d bytes, %v", len(data), err)
		}
	}
}

// TestCloseWaitsForUpload: Close called during an upload lets it finish
// (the reference is published and resolves) and only then releases the
// publisher.
func TestCloseWaitsForUpload(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	ch := make(chan *nats.Msg, 1)
	if _, err := nc.ChanSubscribe("cw", ch); err != nil {
		t.Fatal(err)
	}
	wnc, _ := connect(t, srv.URL())
	closeDone := make(chan struct{})
	var once sync.Once
	if _, err := wnc.Subscribe("$O."+claimcheck.DefaultBucket+".C.>", func(*nats.Msg) {
		once.Do(func() { go func() { _ = st.Close(); close(closeDone) }() })
	}); err != nil {
		t.Fatal(err)
	}
	if err := wnc.Flush(); err != nil {
		t.Fatal(err)
	}
	body := payload(8<<20, 55)
	if err := st.PublishMsg(ctxT(t), &nats.Msg{Subject: "cw", Data: body}); err != nil {
		t.Fatalf("PublishMsg with Close called during the upload: %v", err)
	}
	select {
	case <-closeDone:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return after the upload finished")
	}
	ref := recv(t, ch)
	if data, err := st.Resolve(ctxT(t), ref); err != nil || !bytes.Equal(data, body) {
		t.Fatalf("Resolve = %d bytes, %v", len(data), err)
	}
}

// TestUploadOnClosedConnectionReturnsAtOnce: when the connection closes
// during an upload, the publish fails at once (nats.go does not fail the
// pending acknowledgements of a closed connection, and the clean-up
// cannot reach the server): it does not wait for the acknowledgement or
// cleanup timeouts. The error says nothing was published.
func TestUploadOnClosedConnectionReturnsAtOnce(t *testing.T) {
	// Not in parallel: it bounds how long the failing publish takes.
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js, claimcheck.WithCleanupTimeout(time.Minute))
	wnc, _ := connect(t, srv.URL())
	var once sync.Once
	if _, err := wnc.Subscribe("$O."+claimcheck.DefaultBucket+".C.>", func(*nats.Msg) {
		once.Do(func() { go nc.Close() })
	}); err != nil {
		t.Fatal(err)
	}
	if err := wnc.Flush(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := st.PublishMsg(ctxT(t), &nats.Msg{Subject: "gone", Data: payload(32<<20, 56)})
	took := time.Since(start)
	if err == nil {
		t.Fatal("PublishMsg succeeded on a connection closed during the upload")
	}
	t.Logf("error after %v: %v", took, err)
	if !errors.Is(err, claimcheck.ErrNotPublished) || !errors.Is(err, nats.ErrConnectionClosed) {
		t.Fatalf("error %v, want ErrNotPublished and nats.ErrConnectionClosed", err)
	}
	if took > 5*time.Second {
		t.Fatalf("PublishMsg took %v on a closed connection", took)
	}
}

// TestNotPublishedClassification: errors after which nothing was
// published match ErrNotPublished and keep their cause; ErrTooLarge says
// which limit was exceeded.
func TestNotPublishedClassification(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.URL())
	st := newStore(t, js, claimcheck.WithMaxObjectSize(1<<20))
	stream := createStream(t, js, jetstream.StreamConfig{Name: "NP", Subjects: []string{"np.>"}, Storage: jetstream.MemoryStorage, MaxMsgSize: 4096})

	notPublished := func(what string, err error, cause error, text string) {
		t.Helper()
		if !errors.Is(err, claimcheck.ErrNotPublished) {
			t.Errorf("%s: %v does not match ErrNotPublished", what, err)
		}
		if cause != nil && !errors.Is(err, cause) {
			t.Errorf("%s: %v does not match %v", what, err, cause)
		}
		if err != nil && !strings.Contains(err.Error(), text) {
			t.Errorf("%s: %q does not say %q", what, err, text)
		}
	}
	reserved := &nats.Msg{Subject: "np.a", Data: []byte("x"), Header: nats.Header{claimcheck.HeaderRef: {"x"}}}
	notPublished("reserved header", st.PublishMsg(ctxT(t), reserved), claimcheck.ErrReservedHeader, "claim-check header")
	_, err := st.PublishJetStream(ctxT(t), reserved)
	notPublished("reserved header (JetStream)", err, claimcheck.ErrReservedHeader, "claim-check header")
	_, err = st.Prepare(ctxT(t), reserved, 0)
	notPublished("reserved header (Prepare)", err, claimcheck.ErrReservedHeader, "claim-check header")
	notPublished("nil message", st.PublishMsg(ctxT(t), nil), nats.ErrInvalidMsg, "")
	notPublished("empty subject", st.PublishMsg(ctxT(t), &nats.Msg{Data: []byte("x")}), nats.ErrBadSubject, "")

	// Body above the maximum object size.
	notPublished("body too large", st.PublishMsg(ctxT(t), &nats.Msg{Subject: "np.a", Data: make([]byte, 1<<20+1)}), claimcheck.ErrTooLarge, "maximum object size")
	// Headers that cannot fit the connection's max_payload even as a reference.
	bigHdr := nats.Header{"Big": {strings.Repeat("h", limit)}}
	notPublished("headers too large", st.PublishMsg(ctxT(t), &nats.Msg{Subject: "np.a", Data: []byte("x"), Header: bigHdr}), claimcheck.ErrTooLarge, "max_payload")
	// Headers that cannot fit the stream's max_msg_size as a reference.
	midHdr := nats.Header{"Mid": {strings.Repeat("h", 5000)}}
	_, err = st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "np.a", Data: []byte("x"), Header: midHdr})
	notPublished("headers above max_msg_size", err, claimcheck.ErrTooLarge, "max_msg_size")
	// A subject so long that the message's protocol line could exceed
	// the server's max_control_line (TestMetaTooLarge: one whose object
	// meta data does not fit).
	long := "np." + strings.Repeat("s", limit)
	notPublished("long subject", st.PublishMsg(ctxT(t), &nats.Msg{Subject: long, Data: payload(2*limit, 57)}), nats.ErrBadSubject, "max_control_line")

	// A reference the stream refuses: deleted payload, nothing published,
	// the API error still visible.
	_, err = st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "np.a", Data: payload(2*limit, 58)}, jetstream.WithExpectLastSequence(99))
	var apiErr *jetstream.APIError
	notPublished("refused reference", err, nil, "nothing was published")
	if !errors.As(err, &apiErr) {
		t.Errorf("refused reference: %v hides the API error", err)
	}
	// A plain message the stream refuses for its expectation.
	_, err = st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "np.a", Data: []byte("small")}, jetstream.WithExpectLastSequence(99))
	notPublished("refused message", err, nil, "")
	if !errors.As(err, &apiErr) {
		t.Errorf("refused message: %v hides the API error", err)
	}
	if n := streamMsgs(t, stream); n != 0 {
		t.Fatalf("stream holds %d messages", n)
	}
	if n := bucketMsgs(t, st); n != 0 {
		t.Fatalf("bucket holds %d messages", n)
	}

	// A publish that succeeded is no error at all; a resolve failure is
	// not a publish failure.
	if _, err := st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "np.a", Data: payload(2*limit, 59)}); err != nil {
		t.Fatal(err)
	}
	ref := lastMsg(t, stream)
	_, err = st.Resolve(ctxT(t), &nats.Msg{Subject: "np.b", Header: ref.Header})
	if err == nil || errors.Is(err, claimcheck.ErrNotPublished) {
		t.Fatalf("Resolve on another subject = %v, want an error that does not match ErrNotPublished", err)
	}
}

// TestResolveErrorsReturnNoData: Resolve never returns data with an
// error: not the body of a malformed claim check, and a nil message is a
// *ResolveError.
func TestResolveErrorsReturnNoData(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.URL())
	st := newStore(t, js)
	bad := &nats.Msg{Subject: "r", Data: []byte("not a payload"), Header: nats.Header{claimcheck.HeaderSize: {"12"}}}
	data, err := st.Resolve(ctxT(t), bad)
	if !errors.Is(err, claimcheck.ErrCorrupt) || data != nil {
		t.Fatalf("Resolve(malformed) = %q, %v; want nil data and ErrCorrupt", data, err)
	}
	var re *claimcheck.ResolveError
	data, err = st.Resolve(ctxT(t), nil)
	if !errors.As(err, &re) || !errors.Is(err, nats.ErrInvalidMsg) || data != nil {
		t.Fatalf("Resolve(nil) = %q, %v; want nil data and a *ResolveError wrapping nats.ErrInvalidMsg", data, err)
	}
	if _, err := st.Open(ctxT(t), nil); !errors.As(err, &re) {
		t.Fatalf("Open(nil) = %v, want a *ResolveError", err)
	}
	if _, err := st.ResolveJetStream(ctxT(t), nil); !errors.As(err, &re) {
		t.Fatalf("ResolveJetStream(nil) = %v, want a *ResolveError", err)
	}
}

// TestReadEndsSoonAfterConnectionClosed: a Resolve waiting for chunks
// that will not come (a proxy drops every direct-get reply after the meta
// data's) ends soon after the application closes the connection, with
// nats.ErrConnectionClosed, not at the 2 s check for lost replies.
func TestReadEndsSoonAfterConnectionClosed(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	_, wjs := connect(t, s.URL())
	writer := newStore(t, wjs)
	ref, err := writer.Prepare(ctxT(t), &nats.Msg{Subject: "closing", Data: payload(2*limit, 53)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := natstest.StartProxy(t, s.URL())
	nc, js := connect(t, p.URL())
	reader := newStore(t, js)
	p.On(natstest.Rule{Dir: natstest.ToClient, Op: "HMSG", Subject: "_INBOX.>", Nth: 2, Every: true, Action: natstest.Drop})
	done := make(chan error, 1)
	go func() {
		_, err := reader.Resolve(ctxT(t), ref)
		done <- err
	}()
	time.Sleep(300 * time.Millisecond) // the chunks asked for, their replies dropped
	closed := time.Now()
	nc.Close()
	select {
	case err := <-done:
		if !errors.Is(err, nats.ErrConnectionClosed) {
			t.Fatalf("Resolve: %v, want nats.ErrConnectionClosed", err)
		}
		if d := time.Since(closed); d > time.Second {
			t.Errorf("Resolve returned %v after the connection closed", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Resolve still waiting 10 s after the connection closed")
	}
}
