package connlimit_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/natstest"
)

// dial connects the way shim.Connect does, through a connlimit.Dialer
// around inner.
func dial(t *testing.T, url string, inner nats.CustomDialer, opts ...nats.Option) (*nats.Conn, *connlimit.Dialer) {
	t.Helper()
	o := nats.GetDefaultOptions()
	o.CustomDialer = inner
	d := connlimit.NewDialer(&o)
	nc, err := nats.Connect(url, append(opts, nats.SetCustomDialer(d), nats.ReconnectBufSize(-1))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc, d
}

func smallAccount(limit int32) natstest.Option {
	return natstest.WithAccount(natstest.Account{Name: "SMALL", User: "small", Password: "pw", MaxPayload: limit})
}

// TestGuardedWindow: in the moment between CONNECTED and the INFO that
// carries the account's limit, nats.go refuses every non-empty message
// itself (nothing reaches the server, the connection stays open), lets an
// empty one through, and Limit waits for the account's limit.
func TestGuardedWindow(t *testing.T) {
	s := natstest.Start(t, natstest.MaxPayload(64<<10), smallAccount(1024))
	h := &natstest.InfoGate{}
	release := h.Hold()
	nc, d := dial(t, s.UserURL("small"), h)
	st := connlimit.For(nc)
	if !st.Guarded() || d.Dials() != 1 {
		t.Fatalf("guarded %v after %d dials", st.Guarded(), d.Dials())
	}
	if got := nc.MaxPayload(); got != 0 {
		t.Fatalf("MaxPayload before the account's INFO = %d, want 0", got)
	}
	if err := nc.Publish("w", make([]byte, 1)); !errors.Is(err, nats.ErrMaxPayload) { //natssend:reviewed probing nats.go's own check in the window
		t.Fatalf("1-byte publish in the window: %v, want ErrMaxPayload", err)
	}
	if err := nc.Publish("w", nil); err != nil { //natssend:reviewed an empty message fits any limit
		t.Fatalf("empty publish in the window: %v", err)
	}
	got := make(chan int64, 1)
	go func() {
		limit, err := st.Limit(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- limit
	}()
	select {
	case l := <-got:
		t.Fatalf("Limit returned %d before the account's INFO arrived", l)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if l := <-got; l != 1024 {
		t.Fatalf("Limit = %d, want the account's 1024", l)
	}
	if err := nc.Publish("w", make([]byte, 1025)); !errors.Is(err, nats.ErrMaxPayload) { //natssend:reviewed probing nats.go's own check
		t.Fatalf("1025-byte publish: %v, want ErrMaxPayload", err)
	}
	if err := nc.Flush(); err != nil || nc.IsClosed() {
		t.Fatalf("connection after the refusals: %v, closed %v", err, nc.IsClosed())
	}
}

// TestGuardedAfterReconnect: after a reconnect to a server whose account
// limit is lower, a message that fitted before is refused by nats.go
// until the new limit is known, and then by the limit itself.
func TestGuardedAfterReconnect(t *testing.T) {
	s := natstest.Start(t, natstest.MaxPayload(64<<10), smallAccount(32<<10))
	h := &natstest.InfoGate{}
	close(h.Hold())
	reconnected := make(chan struct{}, 1)
	nc, _ := dial(t, s.UserURL("small"), h, nats.ReconnectWait(10*time.Millisecond), nats.MaxReconnects(-1),
		nats.ReconnectHandler(func(*nats.Conn) { reconnected <- struct{}{} }))
	st := connlimit.For(nc)
	if l, err := st.Limit(context.Background()); err != nil || l != 32<<10 {
		t.Fatalf("Limit = %d, %v", l, err)
	}
	release := h.Hold() // the next link's INFO waits
	s.Restart(natstest.MaxPayload(64<<10), smallAccount(8<<10))
	<-reconnected
	msg := make([]byte, 16<<10)
	if err := nc.Publish("w", msg); !errors.Is(err, nats.ErrMaxPayload) { //natssend:reviewed probing nats.go's own check after a reconnect
		t.Fatalf("publish before the new limit: %v, want ErrMaxPayload", err)
	}
	// Up to the placeholder (the least of 4 KiB and the earlier links'
	// limits) a message goes out: small ones nats.go sends on its own
	// right after a reconnect must not fail.
	if got := nc.MaxPayload(); got != connlimit.PlaceholderFloor {
		t.Fatalf("placeholder after reconnect = %d, want %d", got, connlimit.PlaceholderFloor)
	}
	if err := nc.Publish("w", make([]byte, connlimit.PlaceholderFloor)); err != nil { //natssend:reviewed probing nats.go's own check after a reconnect
		t.Fatalf("publish at the placeholder: %v", err)
	}
	if err := nc.Publish("w", make([]byte, connlimit.PlaceholderFloor+1)); !errors.Is(err, nats.ErrMaxPayload) { //natssend:reviewed probing nats.go's own check after a reconnect
		t.Fatalf("publish over the placeholder: %v, want ErrMaxPayload", err)
	}
	close(release)
	if l, err := st.Limit(context.Background()); err != nil || l != 8<<10 {
		t.Fatalf("Limit after reconnect = %d, %v; want 8192", l, err)
	}
	if err := nc.Publish("w", msg); !errors.Is(err, nats.ErrMaxPayload) { //natssend:reviewed probing nats.go's own check after a reconnect
		t.Fatalf("publish over the new limit: %v, want ErrMaxPayload", err)
	}
	if err := nc.Flush(); err != nil || nc.IsClosed() {
		t.Fatalf("connection: %v, closed %v", err, nc.IsClosed())
	}
}

// TestNoLimitFailsSafe: a server that never announces the connection's
// limit (simulated by dropping the INFO) leaves it at 0: Limit says so
// after one round trip instead of guessing, and nats.go refuses to send.
func TestNoLimitFailsSafe(t *testing.T) {
	s := natstest.Start(t)
	nc, _ := dial(t, s.URL(), &natstest.InfoGate{DropInfo: true})
	_, err := connlimit.For(nc).Limit(context.Background())
	if !errors.Is(err, connlimit.ErrNoLimit) {
		t.Fatalf("Limit: %v, want ErrNoLimit", err)
	}
}

// TestUnguarded: a connection not made through the Dialer is not guarded;
// Limit confirms the limit by a round trip instead.
func TestUnguarded(t *testing.T) {
	s := natstest.Start(t, natstest.MaxPayload(64<<10), smallAccount(2048))
	nc, err := nats.Connect(s.UserURL("small"), nats.ReconnectBufSize(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	st := connlimit.For(nc)
	if st.Guarded() {
		t.Fatal("a plain nats.Connect connection counts as guarded")
	}
	if l, err := st.Limit(context.Background()); err != nil || l != 2048 {
		t.Fatalf("Limit = %d, %v; want 2048", l, err)
	}
	ip, err := nats.Connect("", nats.InProcessServer(s.Server()), nats.ReconnectBufSize(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer ip.Close()
	if connlimit.For(ip).Guarded() {
		t.Fatal("an in-process connection counts as guarded")
	}
}

// TestLimitSharedRoundTrip: many callers in the window share one round
// trip and all get the account's limit.
func TestLimitSharedRoundTrip(t *testing.T) {
	s := natstest.Start(t, natstest.MaxPayload(64<<10), smallAccount(4096))
	h := &natstest.InfoGate{}
	release := h.Hold()
	nc, _ := dial(t, s.UserURL("small"), h)
	st := connlimit.For(nc)
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if l, err := st.Limit(context.Background()); err != nil || l != 4096 {
				t.Errorf("Limit = %d, %v", l, err)
			}
		}()
	}
	time.Sleep(20 * time.Millisecond) // time for the callers to gather in the window (none is observable)
	close(release)
	wg.Wait()
	if n := connlimit.RoundTrips(st); n != 1 {
		t.Fatalf("%d round trips for 50 callers, want 1", n)
	}
	// Once known, the limit costs no round trip.
	if _, err := st.Limit(context.Background()); err != nil || connlimit.RoundTrips(st) != 1 {
		t.Fatalf("Limit: %v after %d round trips", err, connlimit.RoundTrips(st))
	}
}

// TestLimitHonoursContext: a caller's context bounds its wait.
func TestLimitHonoursContext(t *testing.T) {
	s := natstest.Start(t)
	h := &natstest.InfoGate{}
	defer close(h.Hold())
	nc, _ := dial(t, s.URL(), h)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := connlimit.For(nc).Limit(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Limit: %v, want DeadlineExceeded", err)
	}
}

// TestPlaceholderNeverAboveEarlierLimits: after a reconnect the
// placeholder is the least of 4 KiB, the server-wide value and every limit
// an earlier link had.
func TestPlaceholderNeverAboveEarlierLimits(t *testing.T) {
	s := natstest.Start(t, natstest.MaxPayload(64<<10), smallAccount(1024))
	reconnected := make(chan struct{}, 1)
	h := &natstest.InfoGate{}
	close(h.Hold())
	nc, _ := dial(t, s.UserURL("small"), h, nats.ReconnectWait(10*time.Millisecond), nats.MaxReconnects(-1),
		nats.ReconnectHandler(func(*nats.Conn) { reconnected <- struct{}{} }))
	st := connlimit.For(nc)
	if l, err := st.Limit(context.Background()); err != nil || l != 1024 {
		t.Fatalf("Limit = %d, %v", l, err)
	}
	release := h.Hold()
	s.Restart(natstest.MaxPayload(64<<10), smallAccount(32<<10))
	<-reconnected
	if got := nc.MaxPayload(); got != 1024 {
		t.Fatalf("placeholder = %d, want the earlier link's 1024", got)
	}
	close(release)
	if l, err := st.Limit(context.Background()); err != nil || l != 32<<10 {
		t.Fatalf("Limit after reconnect = %d, %v", l, err)
	}
}

func TestDecide(t *testing.T) {
	for _, c := range []struct {
		size, limit, ref int64
		want             connlimit.Verdict
	}{
		{100, 100, 10, connlimit.Fits},
		{101, 100, 10, connlimit.ClaimCheck},
		{101, 100, 100, connlimit.ClaimCheck},
		{101, 100, 101, connlimit.Refuse},
		{101, 100, connlimit.NoClaimCheck, connlimit.Refuse},
		{0, 0, connlimit.NoClaimCheck, connlimit.Fits},
	} {
		if got := connlimit.Decide(c.size, c.limit, c.ref); got != c.want {
			t.Errorf("Decide(%d, %d, %d) = %v, want %v", c.size, c.limit, c.ref, got, c.want)
		}
	}
}
