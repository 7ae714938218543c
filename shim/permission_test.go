package shim_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// TestPermissionDeniedIsAnError: the server reports a denied publish only
// through the connection's asynchronous error callback. On a connection
// made by Connect, a Store's bind and upload end at that report with a
// PERMISSION_DENIED error naming the subject (errors.Is
// nats.ErrPermissionViolation, not run), within a second and not at
// their deadline, and the user's own error callback still gets it.
func TestPermissionDeniedIsAnError(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	s := natstest.Start(t, natstest.JetStream(), natstest.MaxPayload(limit),
		natstest.WithUser(natstest.User{Name: "nojs", Password: "p", Publish: []string{"ev.>"}, Subscribe: []string{"_INBOX.>"}}),
		natstest.WithUser(natstest.User{Name: "nochunks", Password: "p", Publish: []string{"ev.>", "$JS.API.>"}, Subscribe: []string{"_INBOX.>"}}),
		natstest.WithUser(natstest.User{Name: "nojsd", Password: "p", Publish: []string{"ev.>", "$JS.API.>", "$O.>"}, Subscribe: []string{"_INBOX.>"}}),
		natstest.WithUser(natstest.User{Name: "svc", Password: "p", Subscribe: []string{"_INBOX.>"}, Publish: []string{
			"ev.>", "$JS.API.INFO", "$JS.API.STREAM.INFO.>", "$JS.API.STREAM.CREATE.OBJ_perm", "$JS.API.STREAM.PURGE.>", "$O.>"}}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// The bucket exists: made by a user who may.
	admin := connect(t, s.URL())
	ajs, err := jetstream.New(admin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := claimcheck.New(ctx, ajs, claimcheck.WithBucket("perm")); err != nil {
		t.Fatal(err)
	}
	published, err := admin.SubscribeSync("ev.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Flush(); err != nil {
		t.Fatal(err)
	}

	check := func(t *testing.T, err error, took time.Duration, subject string) {
		t.Helper()
		d := shim.Describe(err)
		if d == nil || d.Code != shim.CodePermissionDenied || shim.Classify(err) != shim.OutcomeNotRun ||
			!errors.Is(err, nats.ErrPermissionViolation) || !strings.Contains(err.Error(), subject) {
			t.Errorf("got %v (code %v, %v); want PERMISSION_DENIED, not run, naming %q", err, d, shim.Classify(err), subject)
		}
		if took > time.Second {
			t.Errorf("the error came after %v, want within a second", took)
		}
	}

	t.Run("New without the JetStream API", func(t *testing.T) {
		reported := make(chan error, 8)
		nc := connect(t, s.UserURL("nojs"), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { reported <- err }))
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		_, err = claimcheck.New(ctx, js, claimcheck.WithBucket("perm"))
		check(t, err, time.Since(t0), "$JS.API")
		select {
		case err := <-reported:
			if !errors.Is(err, nats.ErrPermissionViolation) {
				t.Errorf("the user's error callback got %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("the user's error callback was not called")
		}
	})

	t.Run("upload without the chunk subjects", func(t *testing.T) {
		nc := connect(t, s.UserURL("nochunks"))
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		st, err := claimcheck.New(ctx, js, claimcheck.WithBucket("perm"))
		if err != nil {
			t.Fatal(err)
		}
		pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
		defer pcancel()
		t0 := time.Now()
		err = st.PublishMsg(pctx, &nats.Msg{Subject: "ev.data", Data: make([]byte, 4*limit)})
		check(t, err, time.Since(t0), "$O.perm.C.")
		if !errors.Is(err, claimcheck.ErrNotPublished) {
			t.Errorf("%v does not match ErrNotPublished", err)
		}
	})

	t.Run("upload denied: the clean-up does not publish again", func(t *testing.T) {
		var reports atomic.Int64
		nc := connect(t, s.UserURL("nochunks"), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) { reports.Add(1) }))
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		st, err := claimcheck.New(ctx, js, claimcheck.WithBucket("perm"))
		if err != nil {
			t.Fatal(err)
		}
		err = st.PublishMsg(ctx, &nats.Msg{Subject: "ev.data", Data: make([]byte, 4*limit)})
		if err == nil || strings.Contains(err.Error(), "context ended") {
			t.Errorf("%v: the caller's context is live", err)
		}
		// One report per chunk published before the first report ended the
		// upload; then none: the clean-up does not publish to the denied
		// subject (its retries would come every couple of seconds).
		last, since := reports.Load(), time.Now()
		natstest.Eventually(t, 5*time.Second, func() bool {
			if n := reports.Load(); n != last {
				last, since = n, time.Now()
			}
			return last > 0 && time.Since(since) > 300*time.Millisecond
		}, "the chunks' reports")
		stays(t, 2500*time.Millisecond, func() bool { return reports.Load() == last }, "no more denied publishes after the upload returned")
	})

	t.Run("New beside another part of the service's denied requests", func(t *testing.T) {
		nc := connect(t, s.UserURL("svc"), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		// Another part of the service makes JetStream requests it may not.
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = nc.Publish("$JS.API.STREAM.CREATE.KV_other", []byte("{}"))
				_ = nc.Flush()
			}
		}()
		_, err = claimcheck.New(ctx, js, claimcheck.WithBucket("perm"))
		close(stop)
		<-done
		if err != nil {
			t.Errorf("New failed because of another publish's denial: %v", err)
		}
	})

	t.Run("JetStream publish to a stream subject the user may not publish to", func(t *testing.T) {
		if _, err := ajs.CreateStream(ctx, jetstream.StreamConfig{Name: "JSD", Subjects: []string{"jsd.>"}, Storage: jetstream.MemoryStorage}); err != nil {
			t.Fatal(err)
		}
		nc := connect(t, s.UserURL("nojsd"), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		st, err := claimcheck.New(ctx, js, claimcheck.WithBucket("perm"))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{100, 4 * limit} {
			pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
			t0 := time.Now()
			_, err := st.PublishJetStream(pctx, &nats.Msg{Subject: "jsd.x", Data: make([]byte, n)})
			pcancel()
			check(t, err, time.Since(t0), "jsd.x")
		}
		// The large one's payload was uploaded (allowed), then deleted: its
		// reference was certainly not stored.
		natstest.Eventually(t, 5*time.Second, func() bool {
			str, err := ajs.Stream(ctx, "OBJ_perm")
			return err == nil && str.CachedInfo().State.Msgs == 0
		}, "the bucket to be empty")
	})

	if err := admin.Flush(); err != nil {
		t.Fatal(err)
	}
	if m, err := published.NextMsg(100 * time.Millisecond); err == nil {
		t.Errorf("something was published on %s", m.Subject)
	}
}

// TestDomainUnknownWithoutAccountInfo: a Store in a JetStream domain whose
// user may not ask for the account's information ($JS.API.INFO) works: its
// references name no domain (the reader's own) and its uploads count when
// the bucket's stream acknowledges them.
func TestDomainUnknownWithoutAccountInfo(t *testing.T) {
	t.Parallel()
	const limit = 16 << 10
	s := natstest.Start(t, natstest.JetStream(), natstest.Domain("hub"), natstest.MaxPayload(limit),
		natstest.WithUser(natstest.User{Name: "narrow", Password: "p", Publish: []string{"ev.>", "$JS.API.STREAM.>", "$JS.API.CONSUMER.>", "$JS.API.DIRECT.GET.>", "$O.>"}, Subscribe: []string{"_INBOX.>"}}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc := connect(t, s.UserURL("narrow"), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	st, err := claimcheck.New(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(t0); el > 2*time.Second {
		t.Errorf("New took %v", el)
	}
	ref, err := st.Prepare(ctx, &nats.Msg{Subject: "ev.x", Data: make([]byte, 3*limit)}, 0)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if d, ok := ref.Header[claimcheck.HeaderDomain]; ok {
		t.Errorf("a reference of an unknown domain names %q", d)
	}
	if data, err := st.Resolve(ctx, ref); err != nil || len(data) != 3*limit {
		t.Fatalf("Resolve: %d bytes, %v", len(data), err)
	}
}
