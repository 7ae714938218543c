package shim_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

func TestRequestExactlyAtLimitWithAuthHeader(t *testing.T) {
	t.Parallel()
	const limit = 2048
	s := natstest.Start(t, natstest.MaxPayload(limit))
	var got counter
	var lastLen int
	var mu sync.Mutex
	serve(t, s, "svc", func(m *nats.Msg) {
		got.inc()
		mu.Lock()
		lastLen = shim.MsgSize(m)
		mu.Unlock()
		_ = shim.Respond(m, []byte("ok"), nil)
	})
	nc := connect(t, s.URL())
	c := shim.NewClient(nc, shim.WithHeader("Authorization", "Bearer secret-token"), shim.WithTimeout(5*time.Second))
	warm(t, c)
	hdr := nats.Header{"Authorization": {"Bearer secret-token"}, shim.HeaderTimeout: {"5000"}, shim.HeaderMaxPayload: {"2048"}}
	body := limit - shim.HeaderSize(hdr)

	reply, err := c.Request(context.Background(), "svc", make([]byte, body))
	if err != nil {
		t.Fatalf("request of exactly %d bytes: %v", limit, err)
	}
	if string(reply.Data) != "ok" {
		t.Fatalf("reply %q", reply.Data)
	}
	mu.Lock()
	if lastLen != limit {
		t.Fatalf("responder saw %d bytes, want %d", lastLen, limit)
	}
	mu.Unlock()

	_, err = c.Request(context.Background(), "svc", make([]byte, body+1))
	var se *shim.Error
	if !errors.As(err, &se) || !errors.Is(err, shim.ErrPayloadTooLarge) || !errors.Is(err, nats.ErrMaxPayload) {
		t.Fatalf("one byte over: want PAYLOAD_TOO_LARGE, got %v", err)
	}
	if se.Code != shim.CodePayloadTooLarge || se.Size != limit+1 || se.Limit != limit || se.Sent || se.Remote {
		t.Fatalf("error fields: %+v", se)
	}
	if shim.Classify(err) != shim.OutcomeNotRun || shim.MayHaveRun(err) {
		t.Fatalf("a local refusal must be OutcomeNotRun, got %v", shim.Classify(err))
	}
	for _, want := range []string{strconv.Itoa(limit + 1), strconv.Itoa(limit), "not sent"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not mention %q", err, want)
		}
	}
	if got.get() != 1 {
		t.Fatalf("responder ran %d times, want 1", got.get())
	}
	if nc.IsClosed() {
		t.Fatal("connection closed")
	}
}

func TestPayloadCapBelowServerLimit(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t, natstest.MaxPayload(4096))
	serve(t, s, "svc", func(m *nats.Msg) { _ = shim.Respond(m, nil, nil) })
	nc := connect(t, s.URL())
	c := shim.NewClient(nc, shim.WithPayloadCap(100), shim.WithTimeout(time.Second))
	warm(t, c)
	// The request announces the connection's limit, not the cap.
	over := 100 - shim.HeaderSize(nats.Header{shim.HeaderTimeout: {"1000"}, shim.HeaderMaxPayload: {"4096"}}) + 1
	_, err := c.Request(context.Background(), "svc", make([]byte, over))
	var se *shim.Error
	if !errors.As(err, &se) || se.Limit != 100 || se.Size != 101 {
		t.Fatalf("want refusal at the 100-byte cap, got %v", err)
	}
	if _, err := c.Request(context.Background(), "svc", make([]byte, over-1)); err != nil {
		t.Fatalf("at the cap: %v", err)
	}
}

func TestAccountLimitKnownRightAfterConnect(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t, natstest.MaxPayload(4096),
		natstest.WithAccount(natstest.Account{Name: "SMALL", User: "small", Password: "pw", MaxPayload: 512}))
	// Plain nats.go shows the server-wide value until the INFO after the
	// first PONG is read, which lateInfo delays to the latest legal moment.
	raw, err := nats.Connect(s.UserURL("small"), nats.SetCustomDialer(lateInfo(0)))
	if err != nil {
		t.Fatal(err)
	}
	if got := raw.MaxPayload(); got != 4096 {
		t.Fatalf("test setup: raw MaxPayload right after connect = %d, want the stale 4096", got)
	}
	raw.Close()
	for i := range 3 {
		nc, err := shim.Connect(s.UserURL("small"), nats.SetCustomDialer(lateInfo(0)))
		if err != nil {
			t.Fatal(err)
		}
		if got := nc.MaxPayload(); got != 512 {
			t.Fatalf("attempt %d: MaxPayload right after Connect = %d, want the account's 512", i, got)
		}
		c := shim.NewClient(nc)
		_, err = c.Request(context.Background(), "svc", make([]byte, 1000))
		if !errors.Is(err, shim.ErrPayloadTooLarge) {
			t.Fatalf("attempt %d: 1000 bytes on a 512-byte account: want ErrPayloadTooLarge, got %v", i, err)
		}
		if err := nc.Flush(); err != nil || nc.IsClosed() {
			t.Fatalf("attempt %d: connection not usable after the refusal: %v", i, err)
		}
		nc.Close()
	}
}

func TestLimitAfterReconnectToLowerServer(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t, natstest.MaxPayload(4096))
	responder := serve(t, s, "svc", func(m *nats.Msg) { _ = shim.Respond(m, nil, nil) })
	nc := connect(t, s.URL())
	c := shim.NewClient(nc, shim.WithTimeout(2*time.Second))
	if _, err := c.Request(context.Background(), "svc", make([]byte, 3000)); err != nil {
		t.Fatal(err)
	}
	r0 := nc.Stats().Reconnects
	s.Restart(natstest.MaxPayload(1024))
	natstest.Reconnected(t, nc, r0)
	natstest.Eventually(t, 10*time.Second, func() bool {
		return responder.IsConnected() && responder.Stats().Reconnects > 0 && responder.Flush() == nil
	}, "responder reconnect")
	_, err := c.Request(context.Background(), "svc", make([]byte, 3000))
	var se *shim.Error
	if !errors.As(err, &se) || se.Limit != 1024 {
		t.Fatalf("after reconnect to a 1024-byte server: want refusal at 1024, got %v", err)
	}
	if nc.IsClosed() {
		t.Fatal("connection closed")
	}
	if _, err := c.Request(context.Background(), "svc", make([]byte, 900)); err != nil {
		t.Fatalf("a fitting request after reconnect: %v", err)
	}
}

func TestLimitAfterReconnectToLowerAccountLimit(t *testing.T) {
	t.Parallel()
	acct := func(limit int32) natstest.Option {
		return natstest.WithAccount(natstest.Account{Name: "SMALL", User: "small", Password: "pw", MaxPayload: limit})
	}
	s := natstest.Start(t, natstest.MaxPayload(4096), acct(2048))
	// A connection not made by Connect (no reconnect handler): the client's
	// own check after a reconnect is all that protects it.
	nc, err := nats.Connect(s.UserURL("small"), nats.SetCustomDialer(lateInfo(300*time.Millisecond)),
		nats.ReconnectBufSize(-1), nats.ReconnectWait(20*time.Millisecond), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := shim.NewClient(nc, shim.WithTimeout(time.Second))
	if l, err := c.Limit(context.Background()); err != nil || l != 2048 {
		t.Fatalf("limit before restart = %d, %v", l, err)
	}
	s.Restart(natstest.MaxPayload(4096), acct(512))
	natstest.Eventually(t, 10*time.Second, func() bool { return nc.IsConnected() && nc.Stats().Reconnects > 0 }, "reconnect")
	// Now inside the window: connected, INFO not yet read.
	if got := nc.MaxPayload(); got != 4096 {
		t.Fatalf("test setup: MaxPayload right after reconnect = %d, want the stale 4096", got)
	}
	// The server-wide INFO says 4096 until the account's INFO is read; the
	// client must not use that value.
	_, err = c.Request(context.Background(), "nobody", make([]byte, 1000))
	var se *shim.Error
	if !errors.As(err, &se) || se.Code != shim.CodePayloadTooLarge || se.Limit != 512 {
		t.Fatalf("after reconnect with a 512-byte account: want refusal at 512, got %v", err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatalf("connection not usable: %v", err)
	}
}

func TestSlowResponderTimesOutAndRunsOnce(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	var runs counter
	release := make(chan struct{})
	serve(t, s, "slow", shim.Handler(func(ctx context.Context, m *nats.Msg) ([]byte, error) {
		runs.inc()
		<-release
		return []byte("late"), nil
	}))
	nc := connect(t, s.URL())
	c := shim.NewClient(nc)
	start := time.Now()
	_, err := c.Request(context.Background(), "slow", []byte("x"), shim.Timeout(150*time.Millisecond))
	if !errors.Is(err, nats.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want a timeout error with both identities, got %v", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("took %v: the deadline did not apply", el)
	}
	if shim.Classify(err) != shim.OutcomeUnknown || !shim.MayHaveRun(err) {
		t.Fatalf("a timeout must be OutcomeUnknown, got %v", shim.Classify(err))
	}
	close(release)
	stays(t, 300*time.Millisecond, func() bool { return runs.get() == 1 }, "exactly one run")
}

func TestCallerContextDeadlineWins(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	deadlines := make(chan time.Duration, 1)
	serve(t, s, "svc", shim.Handler(func(ctx context.Context, m *nats.Msg) ([]byte, error) {
		d, ok := ctx.Deadline()
		if !ok {
			deadlines <- -1
		} else {
			deadlines <- time.Until(d)
		}
		return nil, nil
	}))
	c := shim.NewClient(connect(t, s.URL()), shim.WithTimeout(time.Minute))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := c.Request(ctx, "svc", nil, shim.Timeout(30*time.Second)); err != nil {
		t.Fatal(err)
	}
	if d := <-deadlines; d <= 2*time.Second || d > 3*time.Second {
		t.Fatalf("responder's remaining time %v, want about 3s (the earliest deadline)", d)
	}
	if _, err := c.Request(context.Background(), "svc", nil, shim.Timeout(700*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if d := <-deadlines; d <= 0 || d > 700*time.Millisecond {
		t.Fatalf("responder's remaining time %v, want at most 700ms (the call's Timeout)", d)
	}
}

func TestNoRespondersIsNotRun(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	c := shim.NewClient(connect(t, s.URL()))
	_, err := c.Request(context.Background(), "nobody.home", []byte("x"))
	if !errors.Is(err, nats.ErrNoResponders) || shim.Classify(err) != shim.OutcomeNotRun {
		t.Fatalf("want ErrNoResponders and OutcomeNotRun, got %v (%v)", err, shim.Classify(err))
	}
}

func TestClosedConnectionIsNotRun(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	nc := connect(t, s.URL())
	c := shim.NewClient(nc)
	nc.Close()
	_, err := c.Request(context.Background(), "svc", []byte("x"))
	if !errors.Is(err, nats.ErrConnectionClosed) || shim.Classify(err) != shim.OutcomeNotRun {
		t.Fatalf("want ErrConnectionClosed and OutcomeNotRun, got %v", err)
	}
}

func TestCancelledContext(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	c := shim.NewClient(connect(t, s.URL()))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Request(ctx, "svc", nil)
	if !errors.Is(err, context.Canceled) || shim.Classify(err) != shim.OutcomeNotRun {
		t.Fatalf("cancelled before sending: got %v (%v)", err, shim.Classify(err))
	}
	serve(t, s, "hang", func(*nats.Msg) {})
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = c.Request(ctx, "hang", nil)
	if !errors.Is(err, context.Canceled) || shim.Classify(err) != shim.OutcomeUnknown {
		t.Fatalf("cancelled while waiting: got %v (%v)", err, shim.Classify(err))
	}
}

func TestServiceErrorHeadersWinOverBody(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	serve(t, s, "err", func(m *nats.Msg) {
		_ = m.RespondMsg(&nats.Msg{Header: nats.Header{
			shim.HeaderErrorCode: {"409"}, shim.HeaderError: {"version conflict"},
		}, Data: []byte(`{"ok":true}`)})
	})
	serve(t, s, "empty", func(m *nats.Msg) { _ = m.Respond(nil) })
	c := shim.NewClient(connect(t, s.URL()))
	_, err := c.Request(context.Background(), "err", nil)
	var se *shim.Error
	if !errors.As(err, &se) || se.Code != "409" || se.Message != "version conflict" || !se.Remote {
		t.Fatalf("want remote 409 error, got %v", err)
	}
	if shim.Classify(err) != shim.OutcomeRejected {
		t.Fatalf("outcome %v", shim.Classify(err))
	}
	reply, err := c.Request(context.Background(), "empty", nil)
	if err != nil || len(reply.Data) != 0 {
		t.Fatalf("an empty reply is a valid success: %v %+v", err, reply)
	}
}

func TestRequestDoesNotModifyCallerMessage(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	serve(t, s, "svc", func(m *nats.Msg) { _ = shim.Respond(m, nil, nil) })
	c := shim.NewClient(connect(t, s.URL()), shim.WithHeader("Authorization", "t"))
	h := nats.Header{"A": {"1"}}
	m := &nats.Msg{Subject: "svc", Header: h}
	if _, err := c.RequestMsg(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if len(h) != 1 || m.Reply != "" {
		t.Fatalf("caller's message changed: %+v", m)
	}
}

func TestConcurrentCallsShareOneConnection(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	serve(t, s, "echo", func(m *nats.Msg) { _ = shim.Respond(m, m.Data, nil) })
	nc := connect(t, s.URL())
	c := shim.NewClient(nc)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 32 {
		wg.Go(func() {
			for i := range 25 {
				want := fmt.Sprintf("%d-%d", g, i)
				reply, err := c.Request(context.Background(), "echo", []byte(want))
				if err != nil {
					errs <- err
					return
				}
				if string(reply.Data) != want {
					errs <- fmt.Errorf("got %q, want %q", reply.Data, want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if s.NumClients() != 2 {
		t.Fatalf("server sees %d clients, want 2", s.NumClients())
	}
}

// warm makes the client confirm the connection's limit now, so that the
// round trip does not happen inside a measured call: the timeout header's
// value (whole milliseconds left) then equals the client's timeout.
func warm(t *testing.T, c *shim.Client) {
	t.Helper()
	if _, err := c.Limit(context.Background()); err != nil {
		t.Fatal(err)
	}
}
