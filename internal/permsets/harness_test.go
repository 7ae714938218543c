package permsets

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

const (
	// stepDeadline bounds every step of a role: what a step waits for
	// must come well within it.
	stepDeadline = 10 * time.Second
	// deniedBound is how soon a step that needs a missing permission must
	// fail: a round trip or two, with plenty of room for a loaded machine,
	// and far from stepDeadline, so that a deadline is never taken for a
	// permission error.
	deniedBound = 3 * time.Second
	// maxPayload is the servers' max_payload: payloads above it are claim
	// checks.
	maxPayload = 64 << 10
	// bucket is the documented sets' bucket.
	bucket = "orders"
)

// env is one row's server: the role's user (documented, or less one
// grant) and the unrestricted user "app", the role's peer.
type env struct {
	t       *testing.T
	srv     *natstest.Server
	user    string
	peer    *nats.Conn        // the unrestricted peer's connection
	peerSt  *claimcheck.Store // the peer's Store on the bucket (it creates it)
	stepCtx context.Context   // the row's context, parent of every step's
}

// startEnv starts a server with the user entry and makes the bucket.
func startEnv(t *testing.T, user, entry string) *env {
	t.Helper()
	s := natstest.Start(t, natstest.JetStream(), natstest.MaxPayload(maxPayload), natstest.WithUserConfig(user, password, entry))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	e := &env{t: t, srv: s, user: user, stepCtx: ctx}
	e.peer = e.connect(s.URL())
	js, err := jetstream.New(e.peer)
	if err != nil {
		t.Fatal(err)
	}
	if e.peerSt, err = claimcheck.New(ctx, js, claimcheck.WithBucket(bucket), claimcheck.WithTTL(time.Hour)); err != nil {
		t.Fatal(err)
	}
	return e
}

// connect connects with shim.Connect, which reports permission
// violations to natssend's waits; the error callback only keeps nats.go
// from logging them.
func (e *env) connect(url string) *nats.Conn {
	e.t.Helper()
	nc, err := shim.Connect(url, nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(nc.Close)
	return nc
}

// role connects as the role's user.
func (e *env) role() *nats.Conn { return e.connect(e.srv.UserURL(e.user)) }

// roleStore binds the bucket as the role's user: the role's first step
// when it uses claim checks.
func (e *env) roleStore(r *run, nc *nats.Conn) (st *claimcheck.Store) {
	r.step("claimcheck.New", func(ctx context.Context) error {
		js, err := jetstream.New(nc)
		if err != nil {
			return err
		}
		st, err = claimcheck.New(ctx, js, claimcheck.WithBucket(bucket))
		return err
	})
	return st
}

// run is one run of a role's steps; the first failing step ends it.
type run struct {
	e      *env
	failed *stepErr
}

// stepErr is a failed step: its name, error and how long it took.
type stepErr struct {
	step string
	err  error
	took time.Duration
}

func (s *stepErr) String() string {
	d := shim.Describe(s.err)
	return fmt.Sprintf("step %q failed after %v: %v (code %s, outcome %v)", s.step, s.took.Round(time.Millisecond), s.err, d.Code, d.Outcome())
}

// step runs f with its own deadline, stepDeadline, unless a step failed
// before. It reports whether the run goes on.
func (r *run) step(name string, f func(ctx context.Context) error) bool {
	if r.failed != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(r.e.stepCtx, stepDeadline)
	defer cancel()
	t0 := time.Now()
	err := f(ctx)
	if err != nil {
		r.failed = &stepErr{step: name, err: err, took: time.Since(t0)}
		return false
	}
	return true
}

// ok reports whether no step failed.
func (r *run) ok() bool { return r.failed == nil }

// denied reports whether err is a permission error: the server's
// violation as natssend reports it (errors.Is nats.ErrPermissionViolation;
// its code says what it means for the caller: PERMISSION_DENIED when the
// operation did not run, or the code of the outcome it caused, such as
// CLAIM_CHECK_UNRESOLVED for a request the responder could not read).
func denied(err error) bool { return errors.Is(err, nats.ErrPermissionViolation) }

// names reports whether the permission error err names a subject that
// the grant g covers: the denial natssend reports carries the subject and
// the operation. A reply denied for want of allow_responses is a publish
// to the caller's inbox.
func names(err error, g permission) bool {
	var d *connlimit.Denial
	if !errors.As(err, &d) {
		return false
	}
	switch g.kind {
	case "allow_responses":
		return d.Op == "publish" && connlimit.SubjectMatches("_INBOX.>", d.Subject)
	case "subscribe":
		return d.Op == "subscribe" && connlimit.SubjectMatches(g.subject, d.Subject)
	}
	return d.Op != "subscribe" && connlimit.SubjectMatches(g.subject, d.Subject)
}
