package claimcheck_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/wire"
)

// sendAndReceive publishes m with PublishMsg and returns what a raw
// subscriber on m.Subject receives.
func sendAndReceive(t *testing.T, nc *nats.Conn, st *claimcheck.Store, m *nats.Msg) *nats.Msg {
	t.Helper()
	ch := make(chan *nats.Msg, 4)
	sub, err := nc.ChanSubscribe(m.Subject, ch)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := st.PublishMsg(ctxT(t), m); err != nil {
		t.Fatalf("PublishMsg(%d bytes): %v", len(m.Data), err)
	}
	return recv(t, ch)
}

func TestFitsUnchangedAndStoresNothing(t *testing.T) {
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	m := &nats.Msg{Subject: "small", Data: []byte("hello"), Header: nats.Header{"K": {"v"}}}
	got := sendAndReceive(t, nc, st, m)
	if string(got.Data) != "hello" || got.Header.Get("K") != "v" || claimcheck.IsClaimCheck(got) {
		t.Fatalf("received %q %v, want the message unchanged", got.Data, got.Header)
	}
	if n := bucketMsgs(t, st); n != 0 {
		t.Fatalf("bucket holds %d messages after a message that fits", n)
	}
	prepared, err := st.Prepare(ctxT(t), m, 0)
	if err != nil || prepared != m {
		t.Fatalf("Prepare = %p, %v; want the same message %p", prepared, err, m)
	}
}

// TestLimitBoundary checks the exact byte: header block + body == limit
// goes unchanged, one byte more goes as a claim check.
func TestLimitBoundary(t *testing.T) {
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	h := nats.Header{"Trace": {"abc"}}
	atLimit := limit - wire.HeaderSize(h)

	exact := &nats.Msg{Subject: "edge", Header: h, Data: payload(atLimit, 1)}
	if wire.MsgSize(exact.Header, len(exact.Data)) != limit {
		t.Fatal("test setup: message is not exactly at the limit")
	}
	got := sendAndReceive(t, nc, st, exact)
	if claimcheck.IsClaimCheck(got) || !bytes.Equal(got.Data, exact.Data) {
		t.Fatalf("a message exactly at the limit was not sent unchanged (claim check: %v)", claimcheck.IsClaimCheck(got))
	}
	if n := bucketMsgs(t, st); n != 0 {
		t.Fatalf("bucket holds %d messages after a message at the limit", n)
	}

	over := &nats.Msg{Subject: "edge", Header: h, Data: payload(atLimit+1, 2)}
	got = sendAndReceive(t, nc, st, over)
	if !claimcheck.IsClaimCheck(got) || len(got.Data) != 0 {
		t.Fatalf("one byte over the limit: received %d bytes, headers %v; want a claim check", len(got.Data), got.Header)
	}
	if got.Header.Get("Trace") != "abc" || got.Header.Get(claimcheck.HeaderSize) != strconv.Itoa(atLimit+1) {
		t.Fatalf("reference headers %v", got.Header)
	}
	data, err := st.Resolve(ctxT(t), got)
	if err != nil || !bytes.Equal(data, over.Data) {
		t.Fatalf("Resolve: %d bytes, %v", len(data), err)
	}
	if !nc.IsConnected() {
		t.Fatal("connection lost")
	}
	// The caller's message and header map are untouched.
	if len(over.Header) != 1 || len(over.Data) != atLimit+1 {
		t.Fatalf("caller's message modified: %v", over.Header)
	}
}

func TestRoundTripFiveTimesLimit(t *testing.T) {
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	want := payload(5*limit, 3)
	got := sendAndReceive(t, nc, st, &nats.Msg{Subject: "five", Data: want})
	data, err := st.Resolve(ctxT(t), got)
	if err != nil || !bytes.Equal(data, want) {
		t.Fatalf("Resolve: %d bytes, %v", len(data), err)
	}
	// The object is an ordinary object store object: nats.go's Get reads it
	// and checks its digest.
	name := got.Header.Get(claimcheck.HeaderRef)
	raw, err := st.ObjectStore().GetBytes(ctxT(t), name)
	if err != nil || !bytes.Equal(raw, want) {
		t.Fatalf("ObjectStore.GetBytes: %d bytes, %v", len(raw), err)
	}
	info, err := st.ObjectStore().GetInfo(ctxT(t), name)
	if err != nil {
		t.Fatal(err)
	}
	if cs := info.Opts.ChunkSize; cs == 0 || cs > limit {
		t.Fatalf("chunk size %d, want at most the connection limit %d", cs, limit)
	}
	// Streaming form.
	r, err := st.Open(ctxT(t), got)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	streamed, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(streamed, want) {
		t.Fatalf("Open: %d bytes, %v", len(streamed), err)
	}
}

// TestRoundTrip100MiB: a 100 MiB payload goes through whole. It once
// failed under -race with "nats: no heartbeat received": the read now
// survives missed heartbeats (TestMissedHeartbeatDoesNotEndRead), and the
// read gets a deadline of its own, generous for a slow (race-instrumented,
// 2-core) machine. Skipped with -short.
func TestRoundTrip100MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("100 MiB round trip skipped with -short")
	}
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	ch := make(chan *nats.Msg, 1)
	if _, err := nc.ChanSubscribe("big", ch); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	want := payload(100<<20, 4)
	start := time.Now()
	if err := st.PublishMsg(ctx, &nats.Msg{Subject: "big", Data: want}); err != nil {
		t.Fatalf("PublishMsg(100 MiB): %v", err)
	}
	got := recv(t, ch)
	t.Logf("100 MiB publish: %v", time.Since(start))
	data, err := st.Resolve(ctx, got)
	if err != nil || !bytes.Equal(data, want) {
		t.Fatalf("Resolve: %d bytes, %v", len(data), err)
	}
	t.Logf("100 MiB publish + resolve: %v", time.Since(start))
}

func TestAboveMaxRefusedBeforeStoring(t *testing.T) {
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	ch := make(chan *nats.Msg, 1)
	if _, err := nc.ChanSubscribe("huge", ch); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, claimcheck.MaxSize+1)
	err := st.PublishMsg(ctxT(t), &nats.Msg{Subject: "huge", Data: big})
	if !errors.Is(err, claimcheck.ErrTooLarge) {
		t.Fatalf("PublishMsg(MaxSize+1) = %v, want ErrTooLarge", err)
	}
	if _, err := st.PublishJetStream(ctxT(t), &nats.Msg{Subject: "huge", Data: big}); !errors.Is(err, claimcheck.ErrTooLarge) {
		t.Fatalf("PublishJetStream(MaxSize+1) = %v, want ErrTooLarge", err)
	}
	if n := bucketMsgs(t, st); n != 0 {
		t.Fatalf("bucket holds %d messages after a refused payload", n)
	}
	noMsg(t, ch)

	// A smaller configured maximum is enforced the same way, on both sides.
	small := newStore(t, js, claimcheck.WithBucket("small"), claimcheck.WithMaxObjectSize(100<<10))
	if err := small.PublishMsg(ctxT(t), &nats.Msg{Subject: "huge", Data: make([]byte, 100<<10+1)}); !errors.Is(err, claimcheck.ErrTooLarge) {
		t.Fatalf("PublishMsg above WithMaxObjectSize = %v, want ErrTooLarge", err)
	}
	ref := &nats.Msg{Subject: "huge", Header: nats.Header{
		claimcheck.HeaderRef:  {"aaaaaaaaaaaaaaaaaaaaaaaaaa"},
		claimcheck.HeaderSize: {strconv.Itoa(100<<10 + 1)}}}
	if _, err := small.Resolve(ctxT(t), ref); !errors.Is(err, claimcheck.ErrTooLarge) {
		t.Fatalf("Resolve of a reference above the maximum = %v, want ErrTooLarge", err)
	}
}

func TestFanOutEachSubscriberResolves(t *testing.T) {
	srv := startServer(t)
	_, js := connect(t, srv.URL())
	st := newStore(t, js)
	want := payload(3*limit+17, 5)
	type result struct {
		data []byte
		hdr  nats.Header
	}
	results := make(chan result, 3)
	for i := 0; i < 3; i++ {
		rnc, rjs := connect(t, srv.URL())
		rst := newStore(t, rjs)
		if _, err := rst.Subscribe("fan", func(m *nats.Msg) {
			results <- result{m.Data, m.Header}
		}, func(m *nats.Msg, err error) { t.Errorf("subscriber %d: %v", i, err) }); err != nil {
			t.Fatal(err)
		}
		if err := rnc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.PublishMsg(ctxT(t), &nats.Msg{Subject: "fan", Data: want, Header: nats.Header{"X": {"1"}}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		select {
		case r := <-results:
			if !bytes.Equal(r.data, want) {
				t.Fatalf("subscriber got %d bytes, want %d", len(r.data), len(want))
			}
			if r.hdr.Get("X") != "1" || r.hdr.Get(claimcheck.HeaderRef) != "" {
				t.Fatalf("handler headers %v: want the caller's headers without the claim-check ones", r.hdr)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("only %d of 3 subscribers resolved", i)
		}
	}
	// Fan-out keeps the payload (TTL expiry only).
	if n := bucketMsgs(t, st); n == 0 {
		t.Fatal("payload deleted on a fan-out subject")
	}
}

func TestQueueSubscribeDeleteAfterRead(t *testing.T) {
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	got := make(chan []byte, 2)
	for i := 0; i < 2; i++ {
		if _, err := st.QueueSubscribe("work", "workers", func(m *nats.Msg) { got <- m.Data },
			func(m *nats.Msg, err error) { t.Errorf("queue member: %v", err) }, claimcheck.DeleteAfterRead()); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	want := payload(2*limit, 6)
	if err := st.PublishMsg(ctxT(t), &nats.Msg{Subject: "work", Data: want}); err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-got:
		if !bytes.Equal(d, want) {
			t.Fatalf("got %d bytes", len(d))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery")
	}
	waitFor(t, "payload deleted after read", func() bool { return bucketMsgs(t, st) == 0 })
	select {
	case <-got:
		t.Fatal("delivered twice in a queue group")
	default:
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestTTLExpiryGivesErrMissing(t *testing.T) {
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js, claimcheck.WithBucket("short"), claimcheck.WithTTL(time.Second))
	got := sendAndReceive(t, nc, st, &nats.Msg{Subject: "ttl", Data: payload(2*limit, 7)})
	if _, err := st.Resolve(ctxT(t), got); err != nil {
		t.Fatalf("Resolve before expiry: %v", err)
	}
	name := got.Header.Get(claimcheck.HeaderRef)
	var err error
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err = st.Resolve(ctxT(t), got)
		if err != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !errors.Is(err, claimcheck.ErrMissing) {
		t.Fatalf("Resolve after TTL = %v, want ErrMissing", err)
	}
	if !strings.Contains(err.Error(), name) {
		t.Fatalf("error %q does not name the object %q", err, name)
	}
	var re *claimcheck.ResolveError
	if !errors.As(err, &re) || re.Object != name || !re.Permanent() {
		t.Fatalf("error %#v: want a permanent *ResolveError for %q", err, name)
	}
}

func TestForgedReferenceToAnotherSubjectRefused(t *testing.T) {
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	secret := payload(2*limit, 8)
	ref := sendAndReceive(t, nc, st, &nats.Msg{Subject: "secret.a", Data: secret})

	// A publisher allowed on "public.b" copies the reference it saw.
	forged := &nats.Msg{Subject: "public.b", Header: ref.Header}
	ch := make(chan *nats.Msg, 1)
	errs := make(chan error, 1)
	if _, err := st.Subscribe("public.b", func(m *nats.Msg) { ch <- m },
		func(m *nats.Msg, err error) { errs <- err }); err != nil {
		t.Fatal(err)
	}
	if err := nc.PublishMsg(forged); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		if !errors.Is(err, claimcheck.ErrSubjectMismatch) || !errors.Is(err, claimcheck.ErrCorrupt) {
			t.Fatalf("forged reference: %v, want ErrSubjectMismatch (and ErrCorrupt)", err)
		}
	case m := <-ch:
		t.Fatalf("handler got the other subject's payload (%d bytes)", len(m.Data))
	case <-time.After(10 * time.Second):
		t.Fatal("forged reference reached neither handler")
	}
	if _, err := st.Open(ctxT(t), forged); !errors.Is(err, claimcheck.ErrSubjectMismatch) {
		t.Fatalf("Open(forged) = %v, want ErrSubjectMismatch", err)
	}
	// Discard refuses it too: the payload stays for its real receivers.
	if err := st.Discard(ctxT(t), forged); !errors.Is(err, claimcheck.ErrSubjectMismatch) {
		t.Fatalf("Discard(forged) = %v, want ErrSubjectMismatch", err)
	}
	if data, err := st.Resolve(ctxT(t), ref); err != nil || !bytes.Equal(data, secret) {
		t.Fatalf("the genuine reference no longer resolves: %v", err)
	}
}

func TestCorruptHeadersRefused(t *testing.T) {
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	want := payload(2*limit, 9)
	ref := sendAndReceive(t, nc, st, &nats.Msg{Subject: "c", Data: want})
	name := ref.Header.Get(claimcheck.HeaderRef)
	size := ref.Header.Get(claimcheck.HeaderSize)
	cases := map[string]nats.Header{
		"size one less":    {claimcheck.HeaderRef: {name}, claimcheck.HeaderSize: {strconv.Itoa(len(want) - 1)}},
		"size one more":    {claimcheck.HeaderRef: {name}, claimcheck.HeaderSize: {strconv.Itoa(len(want) + 1)}},
		"size not a count": {claimcheck.HeaderRef: {name}, claimcheck.HeaderSize: {"12ab"}},
		"negative size":    {claimcheck.HeaderRef: {name}, claimcheck.HeaderSize: {"-1"}},
		"size with sign":   {claimcheck.HeaderRef: {name}, claimcheck.HeaderSize: {"+" + size}},
		"two sizes":        {claimcheck.HeaderRef: {name}, claimcheck.HeaderSize: {size, size}},
		"no size":          {claimcheck.HeaderRef: {name}},
		"no ref":           {claimcheck.HeaderSize: {size}},
		"bad name":         {claimcheck.HeaderRef: {"../../etc"}, claimcheck.HeaderSize: {size}},
		"name too long":    {claimcheck.HeaderRef: {name + "a"}, claimcheck.HeaderSize: {size}},
	}
	for what, h := range cases {
		m := &nats.Msg{Subject: "c", Header: h}
		if _, err := st.Resolve(ctxT(t), m); !errors.Is(err, claimcheck.ErrCorrupt) {
			t.Errorf("%s: Resolve = %v, want ErrCorrupt", what, err)
		} else if !strings.Contains(err.Error(), claimcheck.HeaderSize) && !strings.Contains(err.Error(), claimcheck.HeaderRef) {
			t.Errorf("%s: error %q names no header", what, err)
		}
	}
	withBody := &nats.Msg{Subject: "c", Header: ref.Header, Data: []byte("x")}
	if _, err := st.Resolve(ctxT(t), withBody); !errors.Is(err, claimcheck.ErrCorrupt) {
		t.Errorf("claim check with a body: %v, want ErrCorrupt", err)
	}
	// The genuine reference still works.
	if data, err := st.Resolve(ctxT(t), ref); err != nil || !bytes.Equal(data, want) {
		t.Fatalf("Resolve(genuine) = %v", err)
	}
}

func TestDigestMismatchIsCorrupt(t *testing.T) {
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	want := payload(limit+100, 10)
	ref := sendAndReceive(t, nc, st, &nats.Msg{Subject: "d", Data: want})
	info, err := st.ObjectStore().GetInfo(ctxT(t), ref.Header.Get(claimcheck.HeaderRef))
	if err != nil {
		t.Fatal(err)
	}
	// Replace the chunks with same-sized chunks of other bytes.
	chunkSubj := "$O." + st.Bucket() + ".C." + info.NUID
	stream, err := js.Stream(ctxT(t), "OBJ_"+st.Bucket())
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Purge(ctxT(t), jetstream.WithPurgeSubject(chunkSubj)); err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(want)
	bad[len(bad)-1] ^= 1
	cs := int(info.Opts.ChunkSize)
	for off := 0; off < len(bad); off += cs {
		if _, err := js.Publish(ctxT(t), chunkSubj, bad[off:min(off+cs, len(bad))]); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.Resolve(ctxT(t), ref)
	if !errors.Is(err, claimcheck.ErrCorrupt) || !strings.Contains(err.Error(), "digest") {
		t.Fatalf("Resolve with altered chunks = %v, want ErrCorrupt (digest)", err)
	}
	if got != nil {
		t.Fatalf("Resolve with altered chunks returned %d bytes beside its error", len(got))
	}
	r, err := st.Open(ctxT(t), ref)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := io.ReadAll(r); !errors.Is(err, claimcheck.ErrCorrupt) {
		t.Fatalf("Open+ReadAll with altered chunks = %v, want ErrCorrupt", err)
	}
}

func TestMissingObjectNamesIt(t *testing.T) {
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	ref := sendAndReceive(t, nc, st, &nats.Msg{Subject: "m", Data: payload(limit+1, 11)})
	name := ref.Header.Get(claimcheck.HeaderRef)
	if err := st.ObjectStore().Delete(ctxT(t), name); err != nil {
		t.Fatal(err)
	}
	_, err := st.Resolve(ctxT(t), ref)
	if !errors.Is(err, claimcheck.ErrMissing) || !strings.Contains(err.Error(), name) {
		t.Fatalf("Resolve(deleted) = %v, want ErrMissing naming %q", err, name)
	}
}

func TestPlainMessageResolvesToItsBody(t *testing.T) {
	srv := startServer(t)
	_, js := connect(t, srv.URL())
	st := newStore(t, js)
	m := &nats.Msg{Subject: "p", Data: []byte("body")}
	data, err := st.Resolve(ctxT(t), m)
	if err != nil || string(data) != "body" {
		t.Fatalf("Resolve(plain) = %q, %v", data, err)
	}
	r, err := st.Open(ctxT(t), m)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	if string(b) != "body" {
		t.Fatalf("Open(plain) read %q", b)
	}
}

// TestPrepareDiscard checks the building block the shim uses: Prepare
// stores first and never modifies the caller's message; Discard deletes
// what a failed send left.
func TestPrepareDiscard(t *testing.T) {
	srv := startServer(t)
	_, js := connect(t, srv.URL())
	st := newStore(t, js)
	h := nats.Header{"A": {"1"}}
	m := &nats.Msg{Subject: "req", Reply: "_INBOX.x", Header: h, Data: payload(limit-100, 12)}
	// Fits, but not with 200 more header bytes that the caller will add.
	ref, err := st.Prepare(ctxT(t), m, 200)
	if err != nil {
		t.Fatal(err)
	}
	if ref == m || ref.Subject != "req" || ref.Reply != "_INBOX.x" || len(ref.Data) != 0 || ref.Header.Get("A") != "1" {
		t.Fatalf("reference %+v", ref)
	}
	if len(h) != 1 || len(m.Data) != limit-100 {
		t.Fatalf("caller's message modified: header %v", h)
	}
	if n := bucketMsgs(t, st); n == 0 {
		t.Fatal("Prepare returned a reference before storing")
	}
	if data, err := st.Resolve(ctxT(t), ref); err != nil || !bytes.Equal(data, m.Data) {
		t.Fatalf("Resolve(prepared) = %v", err)
	}
	if err := st.Discard(ctxT(t), ref); err != nil {
		t.Fatal(err)
	}
	if n := bucketMsgs(t, st); n != 0 {
		t.Fatalf("bucket holds %d messages after Discard", n)
	}
	if _, err := st.Resolve(ctxT(t), ref); !errors.Is(err, claimcheck.ErrMissing) {
		t.Fatalf("Resolve after Discard = %v, want ErrMissing", err)
	}
	if err := st.Discard(ctxT(t), ref); err != nil {
		t.Fatalf("second Discard = %v, want nil", err)
	}
	if err := st.Discard(ctxT(t), m); err != nil {
		t.Fatalf("Discard(not a claim check) = %v", err)
	}
	// Headers that alone do not fit: ErrTooLarge, nothing stored.
	if _, err := st.Prepare(ctxT(t), &nats.Msg{Subject: "req", Data: []byte("x")}, limit); !errors.Is(err, claimcheck.ErrTooLarge) {
		t.Fatalf("Prepare with reserve=limit = %v, want ErrTooLarge", err)
	}
	if n := bucketMsgs(t, st); n != 0 {
		t.Fatalf("bucket holds %d messages after a refused Prepare", n)
	}
	// A body with a claim-check header would be misread by receivers.
	if _, err := st.Prepare(ctxT(t), &nats.Msg{Subject: "req", Header: nats.Header{claimcheck.HeaderRef: {"x"}}, Data: []byte("x")}, 0); !errors.Is(err, claimcheck.ErrReservedHeader) {
		t.Fatalf("Prepare with a claim-check header = %v, want ErrReservedHeader", err)
	}
}

func TestCancelledUploadLeavesNothing(t *testing.T) {
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	ch := make(chan *nats.Msg, 1)
	if _, err := nc.ChanSubscribe("cancel", ch); err != nil {
		t.Fatal(err)
	}
	// Watch the chunks go out and cancel after the first few.
	ctx, cancel := context.WithCancel(context.Background())
	wnc, _ := connect(t, srv.URL())
	var once sync.Once
	seen := 0
	var mu sync.Mutex
	if _, err := wnc.Subscribe("$O."+st.Bucket()+".C.>", func(*nats.Msg) {
		mu.Lock()
		seen++
		if seen == 5 {
			once.Do(cancel)
		}
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if err := wnc.Flush(); err != nil {
		t.Fatal(err)
	}
	err := st.PublishMsg(ctx, &nats.Msg{Subject: "cancel", Data: payload(64<<20, 13)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("PublishMsg with a cancelled context = %v, want context.Canceled", err)
	}
	noMsg(t, ch)
	if n := bucketMsgs(t, st); n != 0 {
		t.Fatalf("bucket holds %d messages (orphan chunks) after a cancelled upload", n)
	}
}

func TestConcurrentNewBindsOneBucket(t *testing.T) {
	srv := startServer(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		_, js := connect(t, srv.URL())
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := claimcheck.New(context.Background(), js, claimcheck.WithBucket("race"), claimcheck.WithStorage(jetstream.MemoryStorage))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent New: %v", err)
		}
	}
}

func TestReadTimeoutWithoutDeadline(t *testing.T) {
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	ref := sendAndReceive(t, nc, st, &nats.Msg{Subject: "rt", Data: payload(4*limit, 14)})
	// A reader with a tiny read timeout gives up; with a deadline far beyond
	// the object store's 5 s the read works.
	short := newStore(t, js, claimcheck.WithReadTimeout(time.Nanosecond))
	if _, err := short.Resolve(context.Background(), ref); err == nil {
		t.Fatal("Resolve with a 1 ns read timeout succeeded")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if _, err := short.Resolve(ctx, ref); err != nil {
		t.Fatalf("Resolve with a one-hour deadline: %v", err)
	}
}
