package claimcheck_test

import (
	"errors"
	"runtime"
	"strconv"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
)

// TestInputCheckedBeforeUpload: a message nats.go would refuse is refused
// before anything is stored, by every method, and nothing is left in the
// bucket.
func TestInputCheckedBeforeUpload(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	_, js := connect(t, s.URL())
	st := newStore(t, js)
	body := payload(3*limit, 1) // needs a claim check
	for name, c := range map[string]struct {
		m      *nats.Msg
		target error
	}{
		"header key with a space": {&nats.Msg{Subject: "a", Header: nats.Header{"Bad Key": {"v"}}, Data: body}, nats.ErrBadHeaderMsg},
		"header key with a colon": {&nats.Msg{Subject: "a", Header: nats.Header{"Bad:Key": {"v"}}, Data: body}, nats.ErrBadHeaderMsg},
		"empty subject":           {&nats.Msg{Data: body}, nats.ErrBadSubject},
		"subject with a space":    {&nats.Msg{Subject: "a b", Data: body}, nats.ErrBadSubject},
		"reply with a tab":        {&nats.Msg{Subject: "a", Reply: "r\tx", Data: body}, nats.ErrBadSubject},
		"nil message":             {nil, nats.ErrInvalidMsg},
	} {
		_, perr := st.Prepare(ctxT(t), c.m, 0)
		pmErr := st.PublishMsg(ctxT(t), c.m)
		_, jsErr := st.PublishJetStream(ctxT(t), c.m)
		for what, err := range map[string]error{"Prepare": perr, "PublishMsg": pmErr, "PublishJetStream": jsErr} {
			if !errors.Is(err, c.target) || !errors.Is(err, claimcheck.ErrNotPublished) {
				t.Errorf("%s, %s: %v, want %v and ErrNotPublished", name, what, err, c.target)
			}
		}
		if n := bucketMsgs(t, st); n != 0 {
			t.Fatalf("%s: %d messages stored before the refusal", name, n)
		}
	}
	if _, err := st.Prepare(ctxT(t), &nats.Msg{Subject: "a", Data: body}, -1); !errors.Is(err, claimcheck.ErrInvalidOption) {
		t.Fatalf("negative reserve: %v", err)
	}
	if n := bucketMsgs(t, st); n != 0 {
		t.Fatalf("%d messages stored", n)
	}
}

// TestResolveForgedSizeAllocatesWhatItReads: a claim check whose object
// metadata declares far more than its chunks hold fails with ErrCorrupt
// without allocating the declared size.
func TestResolveForgedSizeAllocatesWhatItReads(t *testing.T) {
	s := startServer(t)
	nc, js := connect(t, s.URL())
	st := newStore(t, js)
	ref, err := st.Prepare(ctxT(t), &nats.Msg{Subject: "forged", Data: payload(2*limit, 2)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	name := ref.Header.Get(claimcheck.HeaderRef)
	// Rewrite the meta data as someone with write access to the bucket
	// could: the same chunks, a declared size of MaxSize.
	rewriteMeta(t, js, st, name, func(info *jetstream.ObjectInfo) { info.Size = claimcheck.MaxSize })
	forged := &nats.Msg{Subject: "forged", Header: nats.Header{}}
	forged.Header.Set(claimcheck.HeaderRef, name)
	forged.Header.Set(claimcheck.HeaderSize, strconv.Itoa(claimcheck.MaxSize))
	_ = nc
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = st.Resolve(ctxT(t), forged)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, claimcheck.ErrCorrupt) {
		t.Fatalf("Resolve: %v, want ErrCorrupt", err)
	}
	// What was really stored is 128 KiB; allow for the read machinery, not
	// for anything near the declared 256 MiB.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("Resolve allocated %d bytes for a 128 KiB object declared as %d", alloc, claimcheck.MaxSize)
	}
}

// TestNilAndInvalidOptions: nil options are ignored, invalid ones are
// errors wrapping ErrInvalidOption, nil handlers are typed errors.
func TestNilAndInvalidOptions(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	_, js := connect(t, s.URL())
	st, err := claimcheck.New(ctxT(t), js, nil, claimcheck.WithStorage(jetstream.MemoryStorage), nil)
	if err != nil {
		t.Fatalf("New with nil options: %v", err)
	}
	for name, o := range map[string]claimcheck.Option{
		"WithBucket(\"\")":       claimcheck.WithBucket(""),
		"WithTTL(0)":             claimcheck.WithTTL(0),
		"WithStorage(7)":         claimcheck.WithStorage(7),
		"WithReplicas(0)":        claimcheck.WithReplicas(0),
		"WithMaxObjectSize(0)":   claimcheck.WithMaxObjectSize(0),
		"WithMaxChunkSize(10)":   claimcheck.WithMaxChunkSize(10),
		"WithReadTimeout(0)":     claimcheck.WithReadTimeout(0),
		"WithCleanupTimeout(-1)": claimcheck.WithCleanupTimeout(-1),
		"WithSubjectMatch(nil)":  claimcheck.WithSubjectMatch(nil),
	} {
		if _, err := claimcheck.New(ctxT(t), js, o); !errors.Is(err, claimcheck.ErrInvalidOption) {
			t.Errorf("%s: %v, want ErrInvalidOption", name, err)
		}
	}
	if _, err := claimcheck.New(ctxT(t), nil); !errors.Is(err, nats.ErrInvalidArg) {
		t.Errorf("New(nil js): %v", err)
	}
	h := func(*nats.Msg) {}
	onErr := func(*nats.Msg, error) {}
	if _, err := st.Subscribe("a", nil, onErr); !errors.Is(err, nats.ErrInvalidArg) {
		t.Errorf("Subscribe(nil handler): %v", err)
	}
	if _, err := st.Subscribe("a", h, nil); !errors.Is(err, claimcheck.ErrNoErrorHandler) {
		t.Errorf("Subscribe(nil error handler): %v", err)
	}
	sub, err := st.Subscribe("a", h, onErr, nil)
	if err != nil {
		t.Fatalf("Subscribe with a nil option: %v", err)
	}
	_ = sub.Unsubscribe()
	if _, err := st.Consume(nil, nil, nil); !errors.Is(err, nats.ErrInvalidArg) {
		t.Errorf("Consume(nil): %v", err)
	}
	if _, err := st.Messages(nil); !errors.Is(err, nats.ErrInvalidArg) {
		t.Errorf("Messages(nil): %v", err)
	}
}
