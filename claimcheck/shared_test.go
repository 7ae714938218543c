package claimcheck_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/natstest"
)

// sharedSetup is a Store whose connection reaches the server through a
// delay line (so that a read lasts long enough for concurrent callers to
// meet it), a claim check of three chunks stored through it, and a
// direct connection counting the direct gets the server is asked for.
type sharedSetup struct {
	st   *claimcheck.Store
	ref  *nats.Msg
	data []byte
	gets atomic.Int64 // direct get requests of any kind
	bats atomic.Int64 // batch requests (the chunks)
}

func newSharedSetup(t *testing.T, delay time.Duration) *sharedSetup {
	t.Helper()
	s := startServer(t)
	spy, _ := connect(t, s.URL())
	f := &sharedSetup{data: payload(3*limit-5000, 77)}
	if _, err := spy.Subscribe("$JS.API.DIRECT.GET.>", func(m *nats.Msg) {
		f.gets.Add(1)
		if bytes.Contains(m.Data, []byte(`"next_by_subj"`)) {
			f.bats.Add(1)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := spy.Flush(); err != nil {
		t.Fatal(err)
	}
	dl := natstest.StartDelayLine(t, strings.TrimPrefix(s.URL(), "nats://"), delay)
	_, js := connect(t, "nats://"+dl.Addr())
	f.st = newStore(t, js)
	ref, err := f.st.Prepare(ctxT(t), &nats.Msg{Subject: "shared.read", Data: f.data}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !claimcheck.IsClaimCheck(ref) {
		t.Fatal("the payload was not claim-checked")
	}
	f.ref = ref
	f.gets.Store(0)
	f.bats.Store(0)
	return f
}

// TestConcurrentResolvesShareOneRead: 100 concurrent Resolves of one
// reference on one Store make one read (a meta get and a batch), and
// each caller gets its own buffer holding the payload.
func TestConcurrentResolvesShareOneRead(t *testing.T) {
	f := newSharedSetup(t, 20*time.Millisecond)
	const callers = 100
	bufs := make([][]byte, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() { bufs[i], errs[i] = f.st.Resolve(ctxT(t), f.ref) })
	}
	wg.Wait()
	seen := map[*byte]int{}
	for i := range callers {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		if !bytes.Equal(bufs[i], f.data) {
			t.Fatalf("caller %d read %d bytes, not the payload", i, len(bufs[i]))
		}
		if j, ok := seen[&bufs[i][0]]; ok {
			t.Fatalf("callers %d and %d were given the same buffer", j, i)
		}
		seen[&bufs[i][0]] = i
	}
	// One read asks for the meta data and one batch; a few callers may
	// start after it ended, but not one read per caller.
	if n := f.gets.Load(); n > 6 {
		t.Errorf("%d concurrent Resolves made %d direct gets, want one read's 2", callers, n)
	}
	// A Resolve after the shared read ended reads anew.
	before := f.gets.Load()
	if got, err := f.st.Resolve(ctxT(t), f.ref); err != nil || !bytes.Equal(got, f.data) {
		t.Fatalf("Resolve after the shared read: %d bytes, %v", len(got), err)
	}
	natstest.Eventually(t, 5*time.Second, func() bool { return f.gets.Load() == before+2 }, "a new read's two direct gets")
}

// TestSharedResolveCallersGiveUpAlone: a caller whose deadline passes or
// whose context is cancelled returns at once with the error a read of its
// own would have returned, while the read goes on for the others, even
// when the one that gave up started it.
func TestSharedResolveCallersGiveUpAlone(t *testing.T) {
	f := newSharedSetup(t, 100*time.Millisecond) // a read takes two round trips: 400 ms
	short, cancelShort := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancelShort()
	cancelled, cancel := context.WithCancel(context.Background())
	type result struct {
		data []byte
		err  error
		took time.Duration
	}
	run := func(ctx context.Context) <-chan result {
		ch := make(chan result, 1)
		go func() {
			t0 := time.Now()
			data, err := f.st.Resolve(ctx, f.ref)
			ch <- result{data, err, time.Since(t0)}
		}()
		return ch
	}
	first := run(short) // starts the read
	time.Sleep(20 * time.Millisecond)
	second := run(cancelled)
	third := run(ctxT(t))
	time.Sleep(50 * time.Millisecond)
	cancel()

	r := <-second
	var re *claimcheck.ResolveError
	if !errors.Is(r.err, context.Canceled) || !errors.As(r.err, &re) || re.Object == "" {
		t.Errorf("cancelled caller: %v, want a *ResolveError naming the object wrapping context.Canceled", r.err)
	}
	if r.took > 300*time.Millisecond {
		t.Errorf("cancelled caller returned after %v, not at its cancellation", r.took)
	}
	r = <-first
	if !errors.Is(r.err, context.DeadlineExceeded) || !errors.As(r.err, &re) || !strings.Contains(r.err.Error(), "timed out") {
		t.Errorf("caller past its deadline: %v, want a *ResolveError wrapping context.DeadlineExceeded", r.err)
	}
	if r.took > 350*time.Millisecond {
		t.Errorf("caller with a 150 ms deadline returned after %v", r.took)
	}
	r = <-third
	if r.err != nil || !bytes.Equal(r.data, f.data) {
		t.Fatalf("the caller that waited: %d bytes, %v", len(r.data), r.err)
	}
	if n := f.bats.Load(); n != 1 {
		t.Errorf("%d batch requests, want the one shared read's", n)
	}
}

// TestSharedResolveEndsWhenEveryCallerGivesUp: once every caller waiting
// for a read has given up, the read stops (it asks for no chunk), and a
// later Resolve reads anew rather than joining it.
func TestSharedResolveEndsWhenEveryCallerGivesUp(t *testing.T) {
	f := newSharedSetup(t, 100*time.Millisecond) // the meta data arrives after 200 ms
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Millisecond)
			defer cancel()
			if _, err := f.st.Resolve(ctx, f.ref); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Resolve with a 120 ms deadline: %v", err)
			}
		})
	}
	wg.Wait()
	time.Sleep(500 * time.Millisecond) // past the meta data's arrival
	if n := f.bats.Load(); n != 0 {
		t.Errorf("the read nobody waits for asked for chunks (%d batch requests)", n)
	}
	got, err := f.st.Resolve(ctxT(t), f.ref)
	if err != nil || !bytes.Equal(got, f.data) {
		t.Fatalf("Resolve after the abandoned read: %d bytes, %v", len(got), err)
	}
}

// TestSharedResolveChecksEachSubject: a copy of a reference on another
// subject does not share the read of the original: each is checked
// against its own subject.
func TestSharedResolveChecksEachSubject(t *testing.T) {
	f := newSharedSetup(t, 20*time.Millisecond)
	moved := &nats.Msg{Subject: "elsewhere", Header: f.ref.Header, Data: f.ref.Data}
	var wg sync.WaitGroup
	var okErr, movedErr error
	var got []byte
	wg.Go(func() { got, okErr = f.st.Resolve(ctxT(t), f.ref) })
	wg.Go(func() { _, movedErr = f.st.Resolve(ctxT(t), moved) })
	wg.Wait()
	if okErr != nil || !bytes.Equal(got, f.data) {
		t.Errorf("the original: %d bytes, %v", len(got), okErr)
	}
	if !errors.Is(movedErr, claimcheck.ErrSubjectMismatch) {
		t.Errorf("the copy on another subject: %v, want ErrSubjectMismatch", movedErr)
	}
}

// TestSharedResolveRace: rounds of many concurrent Resolves of one
// reference, some giving up at random points, each caller overwriting the
// buffer it was given: every caller gets the payload in a buffer of its
// own or its own context's error, and no read outlives its callers.
func TestSharedResolveRace(t *testing.T) {
	f := newSharedSetup(t, 2*time.Millisecond)
	base := runtime.NumGoroutine()
	const callers, rounds = 40, 15
	for round := range rounds {
		var wg sync.WaitGroup
		var ok atomic.Int64
		for i := range callers {
			wg.Go(func() {
				ctx, cancel := context.WithCancel(ctxT(t))
				defer cancel()
				if i%4 == 0 {
					// Give up somewhere in the read: before it starts,
					// during it or after it ended.
					time.AfterFunc(time.Duration((i*7+round*3)%15)*time.Millisecond, cancel)
				}
				got, err := f.st.Resolve(ctx, f.ref)
				if err != nil {
					if i%4 != 0 || !errors.Is(err, context.Canceled) {
						t.Errorf("round %d caller %d: %v", round, i, err)
					}
					return
				}
				if !bytes.Equal(got, f.data) {
					t.Errorf("round %d caller %d: not the payload", round, i)
					return
				}
				ok.Add(1)
				for k := range got {
					got[k] = ^got[k] // must not reach any other caller
				}
			})
		}
		wg.Wait()
		if n := ok.Load(); n < callers*3/4 {
			t.Fatalf("round %d: %d callers read the payload, want at least the %d that never gave up", round, n, callers*3/4)
		}
	}
	natstest.Eventually(t, 5*time.Second, func() bool { return runtime.NumGoroutine() <= base+2 }, fmt.Sprintf("goroutines back to %d", base))
}

// TestSharedResolvePanicReachesEachCaller: a WithSubjectMatch function
// that panics, met by a read several callers share, panics in each
// caller's goroutine with its value, where the caller can recover it
// (on the read's own goroutine it would end the process).
func TestSharedResolvePanicReachesEachCaller(t *testing.T) {
	s := startServer(t)
	dl := natstest.StartDelayLine(t, strings.TrimPrefix(s.URL(), "nats://"), 20*time.Millisecond)
	_, js := connect(t, "nats://"+dl.Addr())
	st := newStore(t, js, claimcheck.WithSubjectMatch(func(stored, received string) bool {
		panic("the match function panicked")
	}))
	ref, err := st.Prepare(ctxT(t), &nats.Msg{Subject: "shared.panic", Data: payload(2*limit, 5)}, 0)
	if err != nil || !claimcheck.IsClaimCheck(ref) {
		t.Fatalf("Prepare: %v", err)
	}
	const callers = 5
	recovered := make(chan any, callers)
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			defer func() { recovered <- recover() }()
			_, err := st.Resolve(ctxT(t), ref)
			t.Errorf("Resolve returned (%v) instead of panicking", err)
		})
	}
	wg.Wait()
	close(recovered)
	for p := range recovered {
		if p != "the match function panicked" {
			t.Errorf("a caller recovered %v, want the match function's panic", p)
		}
	}
}

// TestSharedResolveReportsTheDenialThatEndedItsWait: a caller whose
// context is cancelled with a permission violation as its cause (shim's
// RequestMany watches its subscriptions so) is told of the violation, as
// a read of its own was, not of a bare cancellation.
func TestSharedResolveReportsTheDenialThatEndedItsWait(t *testing.T) {
	f := newSharedSetup(t, 100*time.Millisecond)
	ctx, cancel := context.WithCancelCause(ctxT(t))
	time.AfterFunc(150*time.Millisecond, func() {
		cancel(&connlimit.Denial{Op: "subscribe", Subject: "_INBOX.x", Err: nats.ErrPermissionViolation})
	})
	_, err := f.st.Resolve(ctx, f.ref)
	var re *claimcheck.ResolveError
	if !errors.Is(err, nats.ErrPermissionViolation) || !errors.As(err, &re) || !strings.Contains(err.Error(), "refused") {
		t.Errorf("Resolve: %v, want a *ResolveError for the permission violation", err)
	}
}

// TestSharedResolveGoexitFailsEachCaller: a WithSubjectMatch function
// that calls runtime.Goexit (t.FailNow does) ends the shared read's
// goroutine without a result; every caller sharing it gets an error, none
// a success without the payload.
func TestSharedResolveGoexitFailsEachCaller(t *testing.T) {
	s := startServer(t)
	dl := natstest.StartDelayLine(t, strings.TrimPrefix(s.URL(), "nats://"), 20*time.Millisecond)
	_, js := connect(t, "nats://"+dl.Addr())
	st := newStore(t, js, claimcheck.WithSubjectMatch(func(stored, received string) bool {
		runtime.Goexit()
		return true
	}))
	ref, err := st.Prepare(ctxT(t), &nats.Msg{Subject: "shared.goexit", Data: payload(2*limit, 6)}, 0)
	if err != nil || !claimcheck.IsClaimCheck(ref) {
		t.Fatalf("Prepare: %v", err)
	}
	const callers = 5
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			data, err := st.Resolve(ctxT(t), ref)
			var re *claimcheck.ResolveError
			if err == nil || !errors.As(err, &re) || data != nil {
				t.Errorf("Resolve: %d bytes, %v; want a *ResolveError and no data", len(data), err)
			}
		})
	}
	wg.Wait()
}
