package connlimit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// The texts are the server's (server/client.go pubPermissionViolation,
// subPermissionViolation, replySubjectViolation) as nats.go passes them
// to the error callback (processErr: ErrPermissionViolation wrapping the
// text, lower-cased by the server's protocol parser or not).
func TestParseDenial(t *testing.T) {
	for _, c := range []struct {
		text               string
		op, subject, queue string
	}{
		{`Permissions Violation for Publish to "orders.create"`, "publish", "orders.create", ""},
		{`permissions violation for publish to "$o.perm.c.abc"`, "publish", "$o.perm.c.abc", ""},
		{`Permissions Violation for Subscription to "_INBOX.x.*"`, "subscribe", "_INBOX.x.*", ""},
		{`Permissions Violation for Subscription to "jobs" using queue "workers"`, "subscribe", "jobs", "workers"},
		{`Permissions Violation for Publish with Reply of "_INBOX.y"`, "reply", "_INBOX.y", ""},
	} {
		d := ParseDenial(fmt.Errorf("%w: %s", nats.ErrPermissionViolation, c.text))
		if d == nil || d.Op != c.op || d.Subject != c.subject || d.Queue != c.queue {
			t.Errorf("%s: got %+v", c.text, d)
			continue
		}
		if !errors.Is(d, nats.ErrPermissionViolation) {
			t.Errorf("%v does not match nats.ErrPermissionViolation", d)
		}
	}
	if ParseDenial(nil) != nil || ParseDenial(errors.New(`Permissions Violation for Publish to "x"`)) != nil || ParseDenial(nats.ErrMaxSubscriptionsExceeded) != nil {
		t.Error("only nats.ErrPermissionViolation reports a denial")
	}
}

func TestSubjectMatches(t *testing.T) {
	for _, c := range []struct {
		pattern, subject string
		want             bool
	}{
		{"a.b", "a.b", true}, {"a.b", "a.c", false}, {"a.*", "a.b", true}, {"a.*", "a.b.c", false},
		{"a.>", "a.b.c", true}, {"a.>", "a", false}, {"$JS.>", "$JS.API.STREAM.INFO.OBJ_x", true},
		{"_INBOX.>", "_INBOX.abc.*", true}, {"a.b.c", "a.b", false}, {">", "x", true},
	} {
		if got := SubjectMatches(c.pattern, c.subject); got != c.want {
			t.Errorf("SubjectMatches(%q, %q) = %v", c.pattern, c.subject, got)
		}
	}
}

// TestWatchDenied: a watcher ends at a matching denial with it as the
// cause, not at another (a refused subscription only when it is exactly
// one the wait needs), and nothing is watched on a connection whose
// error callback does not report (no Hook).
func TestWatchDenied(t *testing.T) {
	s := &State{}
	ctx, stop := s.WatchDenied(context.Background(), []string{"ev.>"}, []string{"_INBOX.abc.*"})
	s.Denied(&Denial{Op: "publish", Subject: "ev.x"})
	if ctx.Err() != nil {
		t.Fatal("a connection without the hook watched a denial")
	}
	stop()
	s.Hook()
	ctx, stop = s.WatchDenied(context.Background(), []string{"ev.>"}, []string{"_INBOX.abc.*"})
	defer stop()
	s.Denied(&Denial{Op: "publish", Subject: "other"})
	s.Denied(&Denial{Op: "subscribe", Subject: "ev.x"})            // a subscription, not a publish
	s.Denied(&Denial{Op: "subscribe", Subject: "_INBOX.>"})        // another subscription
	s.Denied(&Denial{Op: "subscribe", Subject: "_INBOX.abc.x"})    // another subscription
	s.Denied(&Denial{Op: "subscribe", Subject: "_INBOX.secret.*"}) // another subscription
	s.Denied(&Denial{Op: "subscribe", Subject: "_INBOX.abc.*", Queue: "q"})
	if ctx.Err() != nil {
		t.Fatal("a denial of another subject or operation ended the wait")
	}
	d := &Denial{Op: "subscribe", Subject: "_INBOX.abc.*", Err: nats.ErrPermissionViolation}
	s.Denied(d)
	select {
	case <-ctx.Done():
	case <-time.After(time.Second):
		t.Fatal("the matching denial did not end the wait")
	}
	if DeniedCause(ctx) != d {
		t.Fatalf("cause %v", context.Cause(ctx))
	}
}

// TestWatchRecycled: many concurrent calls register Watches (recycled
// through a pool), and denials of one subject and of the inbox arrive
// meanwhile: a denial ends exactly the calls waiting on its subject, never
// a call that reused a Watch after its previous call ended, and a refused
// inbox subscription is remembered, ending later calls at registration.
func TestWatchRecycled(t *testing.T) {
	s := &State{}
	if w := s.Watch("a", "_INBOX.abc.*", func() {}); w != nil {
		t.Fatal("a connection without the hook watched")
	}
	s.Hook()
	const calls = 2000
	errs := make(chan error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			subject := fmt.Sprintf("ok.%d", i)
			if i%2 == 0 {
				subject = "denied"
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w := s.Watch(subject, "_INBOX.xyz.*", cancel)
			if i%100 == 0 {
				s.Denied(&Denial{Op: "publish", Subject: "denied"})
			}
			// ctx first: a Watch's denial is set before its cancel, so a
			// cancelled call must see its denial (read after), not
			// necessarily the other way round.
			cancelled := ctx.Err() != nil
			d := w.Denial()
			s.Unwatch(w)
			if d != nil && d.Subject != subject {
				errs <- fmt.Errorf("call %d on %q ended by a denial of %q", i, subject, d.Subject)
			}
			if d == nil && cancelled {
				errs <- fmt.Errorf("call %d cancelled without a denial", i)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s.Denied(&Denial{Op: "subscribe", Subject: "_INBOX.other.*"})
	ended := false
	w := s.Watch("ok.after", "_INBOX.xyz.*", func() { ended = true })
	if d := w.Denial(); d != nil || ended {
		t.Errorf("a call was ended by the refusal of a subscription it does not need (%v)", d)
	}
	s.Unwatch(w)
	s.Denied(&Denial{Op: "subscribe", Subject: "_INBOX.xyz.*"})
	w = s.Watch("ok.after", "_INBOX.xyz.*", func() { ended = true })
	if d := w.Denial(); d == nil || !ended {
		t.Errorf("a call after a refused inbox subscription was not ended at registration (%v)", d)
	}
	s.Unwatch(w)
}

// TestNeedSub: a subscription added to a wait after it began ends it when
// refused, at once when the refusal came before; one added to a wait that
// has stopped, or to a context without a wait, changes nothing; RefusedSub
// tells the exact subscription only.
func TestNeedSub(t *testing.T) {
	s := &State{}
	s.Hook()
	ctx, stop := s.WatchDenied(context.Background(), []string{"svc.x"}, nil)
	defer stop()
	NeedSub(ctx, "_INBOX.a")
	s.Denied(&Denial{Op: "subscribe", Subject: "_INBOX.b"})
	if ctx.Err() != nil {
		t.Fatal("another subscription's refusal ended the wait")
	}
	if s.RefusedSub("_INBOX.b") == nil || s.RefusedSub("_INBOX.a") != nil || s.RefusedSub("_INBOX.>") != nil {
		t.Error("RefusedSub does not tell exactly the refused subscription")
	}
	NeedSub(ctx, "_INBOX.b") // refused already
	if DeniedCause(ctx) == nil || DeniedCause(ctx).Subject != "_INBOX.b" {
		t.Fatalf("a subscription refused before it was added did not end the wait: %v", context.Cause(ctx))
	}

	ctx2, stop2 := s.WatchDenied(context.Background(), nil, nil)
	NeedSub(ctx2, "_INBOX.c")
	s.Denied(&Denial{Op: "subscribe", Subject: "_INBOX.c"})
	if DeniedCause(ctx2) == nil {
		t.Fatal("the refusal of an added subscription did not end the wait")
	}
	stop2()
	NeedSub(ctx2, "_INBOX.d")                 // stopped: nothing
	NeedSub(context.Background(), "_INBOX.d") // no wait: nothing
}
