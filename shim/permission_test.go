package shim_test

import (
	"context"
	"errors"
	"strings"
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
		natstest.WithUser(natstest.User{Name: "nochunks", Password: "p", Publish: []string{"ev.>", "$JS.API.>"}, Subscribe: []string{"_INBOX.>"}}))
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

	if err := admin.Flush(); err != nil {
		t.Fatal(err)
	}
	if m, err := published.NextMsg(100 * time.Millisecond); err == nil {
		t.Errorf("something was published on %s", m.Subject)
	}
}
