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
)

func TestTTLExpiryGivesErrMissing(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	want := payload(limit+100, 10)
	ref := sendAndReceive(t, nc, st, &nats.Msg{Subject: "d", Data: want})
	// Replace the chunks with same-sized chunks of other bytes.
	bad := bytes.Clone(want)
	bad[len(bad)-1] ^= 1
	replaceChunks(t, js, st, ref.Header.Get(claimcheck.HeaderRef), bad)
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
