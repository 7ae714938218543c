package faultmatrix_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
)

// storeUser is the user of the Store rows.
const storeUser = "svc"

// permStore is a Store row as storeUser with the publishes pub and
// subscriptions sub denied; run gets the user's Store.
type permStore struct {
	pub, sub []string
	run      func(t *testing.T, e *secEnv, st *claimcheck.Store)
}

func (p permStore) rowRun(t *testing.T) {
	e := newSecEnv(t, map[string]perms{storeUser: denying(p.pub, p.sub)})
	p.run(t, e, store(t, e.as(storeUser)))
}

// deniedNow checks an error the server's denial caused, at once.
func deniedNow(t *testing.T, err error, took time.Duration, more ...error) {
	t.Helper()
	t.Logf("after %v: %v", took, err)
	if !permissionDenied(err) {
		t.Errorf("err = %v; want PERMISSION_DENIED matching nats.ErrPermissionViolation", err)
	}
	for _, target := range more {
		if !errors.Is(err, target) {
			t.Errorf("errors.Is(err, %v) = false", target)
		}
	}
	quick(t, took)
}

// nothingOn checks that nothing was published on ev.> (sub is the
// admin's subscription, made before).
func nothingOn(t *testing.T, e *secEnv, sub *nats.Subscription) {
	t.Helper()
	_ = e.admin.Flush()
	if m, err := sub.NextMsg(300 * time.Millisecond); err == nil {
		t.Errorf("a message was published on %s", m.Subject)
	}
}

func permStoreRows() []secRow {
	row := func(path sendPath, name string, p permStore) secRow {
		return secRow{path: path, column: columnPerm, name: name, run: p.rowRun}
	}
	buggy := func(r secRow, bug string) secRow { r.bug = bug; return r }
	publishMsg := func(t *testing.T, e *secEnv, st *claimcheck.Store) {
		sub, err := e.admin.SubscribeSync("ev.>")
		if err != nil {
			t.Fatal(err)
		}
		_ = e.admin.Flush()
		ctx, cancel := context.WithTimeout(context.Background(), long)
		defer cancel()
		took := timed(func() { err = st.PublishMsg(ctx, &nats.Msg{Subject: "ev.data", Data: payload(bigSize, 5)}) })
		deniedNow(t, err, took, claimcheck.ErrNotPublished)
		nothingOn(t, e, sub)
		checkLeftIn(t, e.ast, 0)
	}
	publishJS := func(t *testing.T, e *secEnv, st *claimcheck.Store) {
		ev := createEV(t, e.admin)
		ctx, cancel := context.WithTimeout(context.Background(), long)
		defer cancel()
		var err error
		took := timed(func() { _, err = st.PublishJetStream(ctx, &nats.Msg{Subject: "ev.data", Data: payload(bigSize, 6)}) })
		deniedNow(t, err, took)
		if info, err := ev.Info(ctx); err != nil || info.State.Msgs != 0 {
			t.Errorf("the stream holds %v messages (%v), want none", info, err)
		}
		checkLeftIn(t, e.ast, 0)
	}
	read := func(open bool) func(t *testing.T, e *secEnv, st *claimcheck.Store) {
		return func(t *testing.T, e *secEnv, st *claimcheck.Store) {
			ref, _ := storedEvent(t, e)
			ctx, cancel := context.WithTimeout(context.Background(), long)
			defer cancel()
			var data []byte
			var err error
			took := timed(func() {
				if !open {
					data, err = st.Resolve(ctx, ref)
					return
				}
				var rc io.ReadCloser
				if rc, err = st.Open(ctx, ref); err == nil {
					data, err = io.ReadAll(rc)
					_ = rc.Close()
				}
			})
			deniedNow(t, err, took)
			if len(data) > 0 {
				t.Errorf("%d bytes returned with the error", len(data))
			}
		}
	}
	return []secRow{
		buggy(row(pPublishMsg, "the server denies the chunks: ErrNotPublished at once, nothing stored or published",
			permStore{pub: []string{chunks}, run: publishMsg}), metaLeft),
		row(pPublishMsg, "the server denies the reference's subject: ErrNotPublished at once, the payload deleted",
			permStore{pub: []string{"ev.data"}, run: publishMsg}),
		row(pPublishJS, "the server denies the object's meta data: at once, nothing stored",
			permStore{pub: []string{metas}, run: publishJS}),
		row(pPublishJS, "the server denies the stream's subject: at once, the payload deleted",
			permStore{pub: []string{"ev.data"}, run: publishJS}),
		row(pRead, "Subscribe: the server refuses the subscription: an error where it is made", permStore{sub: []string{"ev.>"},
			run: func(t *testing.T, e *secEnv, st *claimcheck.Store) {
				var sub *nats.Subscription
				var err error
				took := timed(func() {
					sub, err = st.Subscribe("ev.data", func(*nats.Msg) {}, func(*nats.Msg, error) {})
				})
				deniedNow(t, err, took)
				if sub != nil {
					t.Error("a subscription was returned with the error")
				}
			}}),
		row(pRead, "Resolve: the server denies direct gets: at once, no bytes", permStore{pub: directGets, run: read(false)}),
		row(pRead, "Open: the server denies direct gets: at once, no bytes", permStore{pub: directGets, run: read(true)}),
		row(pDelete, "Discard: the server denies the purge: at once, the payload stays for the TTL", permStore{pub: purge,
			run: func(t *testing.T, e *secEnv, st *claimcheck.Store) {
				ref, _ := storedEvent(t, e)
				ctx, cancel := context.WithTimeout(context.Background(), long)
				defer cancel()
				var err error
				took := timed(func() { err = st.Discard(ctx, ref) })
				deniedNow(t, err, took)
				checkLeftIn(t, e.ast, 1)
			}}),
		row(pDelete, "DeleteAfterRead: the server denies the purge: the handler gets the payload, onErr the denial", permStore{pub: purge,
			run: func(t *testing.T, e *secEnv, st *claimcheck.Store) {
				got, errs := make(chan []byte, 4), make(chan error, 4)
				if _, err := st.Subscribe("ev.data", func(m *nats.Msg) { got <- m.Data }, func(_ *nats.Msg, err error) { errs <- err },
					claimcheck.DeleteAfterRead()); err != nil {
					t.Fatal(err)
				}
				_ = st.Conn().Flush()
				data := payload(bigSize, 8)
				ctx, cancel := context.WithTimeout(context.Background(), long)
				defer cancel()
				if err := e.ast.PublishMsg(ctx, &nats.Msg{Subject: "ev.data", Data: data}); err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				select {
				case b := <-got:
					if !bytes.Equal(b, data) {
						t.Errorf("the handler got %d bytes, not the payload", len(b))
					}
				case <-time.After(settle):
					t.Fatal("the handler got nothing")
				}
				select {
				case err := <-errs:
					deniedNow(t, err, time.Since(start))
				case <-time.After(settle):
					t.Error("onErr was not told that the payload could not be deleted")
				}
				natstest.Eventually(t, settle, func() bool { return len(got) == 0 }, "no second delivery")
				checkLeftIn(t, e.ast, 1)
			}}),
	}
}
