package shim_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/shim"
)

// reloadable is a server whose user "caller" gets its permissions from a
// configuration file that reload rewrites: the operator's configuration
// reload, on a running server, without a reconnect. User "svc" may do
// anything.
type reloadable struct {
	srv  *server.Server
	file string
	port int
}

func startReloadable(t *testing.T, callerPerms string) *reloadable {
	t.Helper()
	r := &reloadable{file: filepath.Join(t.TempDir(), "server.conf"), port: -1}
	r.write(t, callerPerms)
	o, err := server.ProcessConfigFile(r.file)
	if err != nil {
		t.Fatal(err)
	}
	o.NoSigs, o.NoLog = true, true
	if r.srv, err = server.NewServer(o); err != nil {
		t.Fatal(err)
	}
	go r.srv.Start()
	if !r.srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	t.Cleanup(func() { r.srv.Shutdown(); r.srv.WaitForShutdown() })
	r.port = r.srv.Addr().(*net.TCPAddr).Port
	r.write(t, callerPerms) // the port from now on: a reload keeps it
	return r
}

func (r *reloadable) write(t *testing.T, callerPerms string) {
	t.Helper()
	conf := fmt.Sprintf("listen: \"127.0.0.1:%d\"\nauthorization: { users: [\n  { user: \"svc\", password: \"p\" }\n  { user: \"caller\", password: \"p\", permissions: %s }\n] }\n", r.port, callerPerms)
	if err := os.WriteFile(r.file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
}

// reload gives the caller callerPerms on the running server.
func (r *reloadable) reload(t *testing.T, callerPerms string) {
	t.Helper()
	r.write(t, callerPerms)
	if err := r.srv.Reload(); err != nil {
		t.Fatal(err)
	}
}

func (r *reloadable) url(user string) string {
	return fmt.Sprintf("nats://%s:p@127.0.0.1:%d", user, r.port)
}

const (
	inboxDenied  = `{ subscribe: { allow: ["svc.none"] } }`
	inboxGranted = `{ subscribe: { allow: ["_INBOX.>"] } }`
)

// TestRefusalForgottenAfterReload: a caller whose inbox subscriptions the
// server refuses fails PERMISSION_DENIED at once; after a configuration
// reload grants them, the very next call of every kind succeeds on the
// same connection (no reconnect). A reload that takes the grant away
// again ends a call in flight at the server's report, and the next call
// is refused before it is sent; granted again, calls work again.
func TestRefusalForgottenAfterReload(t *testing.T) {
	t.Parallel()
	r := startReloadable(t, inboxDenied)
	release := make(chan struct{})
	var arrived atomic.Int64
	srv := connect(t, r.url("svc"))
	if _, err := shim.Serve(srv, "svc.echo", shim.Unary(func(_ context.Context, m *nats.Msg) ([]byte, error) { return m.Data, nil })); err != nil {
		t.Fatal(err)
	}
	if _, err := shim.Serve(srv, "svc.hold", shim.Unary(func(ctx context.Context, m *nats.Msg) ([]byte, error) {
		arrived.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return m.Data, nil
	})); err != nil {
		t.Fatal(err)
	}
	for _, subj := range []string{"svc.stream", "svc.stream.denied"} {
		if _, err := shim.Serve(srv, subj, shim.Stream(func(_ context.Context, m *nats.Msg, w *shim.StreamWriter) error {
			_, err := w.Write(m.Data)
			return err
		})); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.Flush(); err != nil {
		t.Fatal(err)
	}
	nc := connect(t, r.url("caller"))
	c := shim.NewClient(nc, shim.WithTimeout(10*time.Second))
	ctx := context.Background()

	t0 := time.Now()
	_, err := c.Request(ctx, "svc.echo", []byte("x"))
	deniedWithin(t, err, time.Since(t0), "_INBOX", shim.OutcomeUnknown)
	t0 = time.Now()
	_, err = c.Request(ctx, "svc.echo", []byte("x"))
	deniedWithin(t, err, time.Since(t0), "_INBOX", shim.OutcomeNotRun)
	// Calls with an inbox of their own learn of its refusal as well
	// (the subscription is made, and refused, after the watch began).
	t0 = time.Now()
	for m, err := range c.RequestMany(ctx, "svc.echo", []byte("x")) {
		if m != nil {
			t.Errorf("RequestMany yielded a reply %q", m.Data)
		}
		deniedWithin(t, err, time.Since(t0), "_INBOX", shim.OutcomeUnknown)
	}
	t0 = time.Now()
	// (A subject of its own: its responder waits for the caller that
	// cannot hear it until its idle bound, one stream at a time.)
	if rs, err := c.RequestStream(ctx, "svc.stream.denied", []byte("x")); err == nil {
		_ = rs.Close()
		t.Error("a stream opened without its inbox")
	} else {
		deniedWithin(t, err, time.Since(t0), "_INBOX", shim.OutcomeUnknown)
	}

	allWork := func(when string) {
		t.Helper()
		if m, err := c.Request(ctx, "svc.echo", []byte("a")); err != nil || string(m.Data) != "a" {
			t.Errorf("%s: Request: %v", when, err)
		}
		if m, err := c.Request(ctx, "svc.echo", []byte("b"), shim.Attempts(2), shim.OperationID("op-"+strings.ReplaceAll(when, " ", "-"))); err != nil || string(m.Data) != "b" {
			t.Errorf("%s: Request with Attempts: %v", when, err)
		}
		n := 0
		for m, err := range c.RequestMany(ctx, "svc.echo", []byte("c"), shim.MaxReplies(1)) {
			if err != nil || string(m.Data) != "c" {
				t.Errorf("%s: RequestMany: %v", when, err)
			}
			n++
		}
		if n != 1 {
			t.Errorf("%s: RequestMany yielded %d", when, n)
		}
		rs, err := c.RequestStream(ctx, "svc.stream", []byte("d"))
		if err != nil {
			t.Errorf("%s: RequestStream: %v", when, err)
			return
		}
		if b, err := io.ReadAll(rs); err != nil || string(b) != "d" {
			t.Errorf("%s: the stream: %q, %v", when, b, err)
		}
	}

	r.reload(t, inboxGranted)
	allWork("granted by a reload")

	// Taken away while a call waits: the server removes the subscription
	// and says so.
	done := make(chan error, 1)
	go func() {
		_, err := c.Request(ctx, "svc.hold", []byte("h"))
		done <- err
	}()
	for wait := time.Now().Add(10 * time.Second); arrived.Load() < 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(wait) {
			t.Fatalf("the request did not reach the responder: %v", <-done)
		}
	}
	t0 = time.Now()
	r.reload(t, inboxDenied)
	select {
	case err := <-done:
		deniedWithin(t, err, time.Since(t0), "_INBOX", shim.OutcomeUnknown)
	case <-time.After(8 * time.Second):
		t.Fatal("the call in flight was not ended by the removal of its subscription")
	}
	close(release)
	t0 = time.Now()
	_, err = c.Request(ctx, "svc.echo", []byte("x"))
	deniedWithin(t, err, time.Since(t0), "_INBOX", shim.OutcomeNotRun)

	r.reload(t, inboxGranted)
	allWork("granted again")
	if n := nc.Stats().Reconnects; n != 0 {
		t.Errorf("%d reconnects: the test is about a connection that stays", n)
	}
}
