package shim_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// notRun checks that err is a local refusal: OutcomeNotRun, Sent false,
// with the given code and errors.Is target.
func notRun(t *testing.T, what string, err error, code string, target error) {
	t.Helper()
	var e *shim.Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: %v is not a *shim.Error", what, err)
	}
	if e.Code != code || e.Sent || shim.Classify(err) != shim.OutcomeNotRun || (target != nil && !errors.Is(err, target)) {
		t.Fatalf("%s: code %s, sent %v, outcome %v, err %v; want %s, not sent, not run, errors.Is %v",
			what, e.Code, e.Sent, shim.Classify(err), err, code, target)
	}
}

// TestRefusedBeforeWritingIsNotRun: everything nats.go or the shim refuses
// before anything is written is OutcomeNotRun with Sent false.
func TestRefusedBeforeWritingIsNotRun(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t, natstest.MaxPayload(4096))
	nc := connect(t, s.URL())
	c := shim.NewClient(nc)
	ctx := context.Background()
	_, err := c.Request(ctx, "", nil)
	notRun(t, "empty subject", err, shim.CodeInvalidArgument, nats.ErrBadSubject)
	_, err = c.Request(ctx, "a b", nil)
	notRun(t, "subject with a space", err, shim.CodeInvalidArgument, nats.ErrBadSubject)
	_, err = c.RequestMsg(ctx, &nats.Msg{Subject: "a", Header: nats.Header{"Bad Key": {"v"}}})
	notRun(t, "header key with a space", err, shim.CodeInvalidArgument, nats.ErrBadHeaderMsg)
	_, err = c.Request(ctx, "a", make([]byte, 5000))
	notRun(t, "too large", err, shim.CodePayloadTooLarge, nats.ErrMaxPayload)
	notRun(t, "publish: empty subject", shim.Publish(nc, "", nil), shim.CodeInvalidArgument, nats.ErrBadSubject)
	notRun(t, "publish: bad reply", shim.PublishMsg(nc, &nats.Msg{Subject: "a", Reply: "r r"}), shim.CodeInvalidArgument, nats.ErrBadSubject)

	// Reconnecting, with no reconnect buffer: refused by the shim, or by
	// nats.go with ErrReconnectBufExceeded; either way not run.
	s.Shutdown()
	natstest.Eventually(t, 5*time.Second, func() bool { return !nc.IsConnected() }, "disconnect")
	_, err = c.Request(ctx, "a", nil)
	notRun(t, "request while reconnecting", err, shim.CodeUnavailable, nats.ErrConnectionReconnecting)
	notRun(t, "publish while reconnecting", shim.Publish(nc, "a", []byte("x")), shim.CodeUnavailable, nats.ErrConnectionReconnecting)
}

// TestDoneContextSameResultEveryTime: a cancelled or expired context gives
// the same result for the same call, whatever the connection did before.
func TestDoneContextSameResultEveryTime(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	nc := connect(t, s.URL())
	c := shim.NewClient(nc)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	serve(t, s, "svc", shim.Handler(func(context.Context, *nats.Msg) ([]byte, error) { return []byte("ok"), nil }))
	for i := range 3 {
		notRun(t, "publish, cancelled", shim.PublishContext(cancelled, nc, "a", []byte("x")), shim.CodeCanceled, context.Canceled)
		notRun(t, "publish, expired", shim.PublishContext(expired, nc, "a", []byte("x")), shim.CodeDeadlineExceeded, context.DeadlineExceeded)
		_, err := c.Request(cancelled, "svc", nil)
		notRun(t, "request, cancelled", err, shim.CodeCanceled, context.Canceled)
		_, err = c.Request(expired, "svc", nil)
		notRun(t, "request, expired", err, shim.CodeDeadlineExceeded, context.DeadlineExceeded)
		// In between, the same calls succeed with a live context.
		if err := shim.PublishContext(context.Background(), nc, "a", []byte("x")); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if _, err := c.Request(context.Background(), "svc", nil); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
	}
}

// TestRetryOnFailedConnect: before the first connect nats.go skips its own
// size check; with the reconnect buffer disabled nothing is written then,
// and after the connect the account's limit applies.
func TestRetryOnFailedConnect(t *testing.T) {
	t.Parallel()
	opts := []natstest.Option{natstest.MaxPayload(64 << 10), natstest.JetStream(),
		natstest.WithAccount(natstest.Account{Name: "SMALL", User: "small", Password: "pw", MaxPayload: 8 << 10})}
	s := natstest.Start(t, opts...)
	url := s.UserURL("small")
	s.Shutdown()
	connected := make(chan struct{})
	nc, err := shim.Connect(url, nats.RetryOnFailedConnect(true), nats.ReconnectWait(20*time.Millisecond),
		nats.ConnectHandler(func(*nats.Conn) { close(connected) }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if nc.IsConnected() {
		t.Fatal("connected to a server that is down")
	}
	c := shim.NewClient(nc)
	_, err = c.Request(context.Background(), "a", make([]byte, 16<<10))
	notRun(t, "request before the first connect", err, shim.CodeUnavailable, nats.ErrConnectionReconnecting)
	notRun(t, "publish before the first connect", shim.Publish(nc, "a", make([]byte, 16<<10)), shim.CodeUnavailable, nats.ErrConnectionReconnecting)
	if err := nc.Publish("a", make([]byte, 16<<10)); !errors.Is(err, nats.ErrReconnectBufExceeded) { //natssend:reviewed nats.go skips its size check here: nothing may be buffered
		t.Fatalf("raw publish before the first connect: %v", err)
	}
	s.Restart(opts...)
	<-connected
	if l, err := c.Limit(context.Background()); err != nil || l != 8<<10 {
		t.Fatalf("limit after the first connect = %d, %v; want the account's 8192", l, err)
	}
	_, err = c.Request(context.Background(), "a", make([]byte, 16<<10))
	notRun(t, "request over the account's limit", err, shim.CodePayloadTooLarge, nats.ErrMaxPayload)
	if err := nc.Flush(); err != nil || nc.IsClosed() {
		t.Fatalf("connection: %v", err)
	}
}

// TestBoundResponderReportsItsLimit: a Handler given its connection says
// in the error which limit the reply exceeded.
func TestBoundResponderReportsItsLimit(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t, natstest.MaxPayload(4096))
	srv := connect(t, s.URL())
	// The handler reports after its error reply is on the wire, so the
	// caller can return first: wait for both reports, keyed by subject.
	reported := make(chan [2]any, 4)
	onErr := shim.OnError(func(m *nats.Msg, err error) { reported <- [2]any{m.Subject, err} })
	big := func(context.Context, *nats.Msg) ([]byte, error) { return make([]byte, 5000), nil }
	if _, err := srv.Subscribe("bound", shim.Handler(big, shim.Conn(srv), onErr)); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Subscribe("unbound", shim.Handler(big, onErr)); err != nil {
		t.Fatal(err)
	}
	if err := srv.Flush(); err != nil {
		t.Fatal(err)
	}
	c := shim.NewClient(connect(t, s.URL()))
	for _, subj := range []string{"bound", "unbound"} {
		if _, err := c.Request(context.Background(), subj, nil); !errors.Is(err, shim.ErrReplyTooLarge) { //natssend:reviewed retry: one request per subject, not a retry
			t.Fatalf("%s: %v, want a remote PAYLOAD_TOO_LARGE", subj, err)
		}
	}
	limits := map[string]int64{}
	noConn := map[string]int{}
	for len(limits) < 2 {
		select {
		case r := <-reported:
			if errors.Is(r[1].(error), shim.ErrNoConn) {
				noConn[r[0].(string)]++
				continue
			}
			var e *shim.Error
			if !errors.As(r[1].(error), &e) || e.Code != shim.CodePayloadTooLarge {
				t.Fatalf("%s reported %v, want PAYLOAD_TOO_LARGE", r[0], r[1])
			}
			limits[r[0].(string)] = e.Limit
		case <-time.After(10 * time.Second):
			t.Fatalf("reports after 10s: %v, want one per subject", limits)
		}
	}
	// The unbound Handler does not know its connection's limit, but the
	// Client's request says the caller's (HeaderMaxPayload): the same.
	if limits["bound"] != 4096 || limits["unbound"] != 4096 {
		t.Fatalf("limits reported: %v, want 4096 from both", limits)
	}
	// The Handler without Conn said once what it lacks, before its reply.
	if noConn["unbound"] != 1 || noConn["bound"] != 0 {
		t.Fatalf("ErrNoConn reports: %v, want one from the unbound Handler", noConn)
	}
	select {
	case r := <-reported:
		t.Fatalf("a third report: %v", r)
	default:
	}
}

// TestNothingPanicsOnNil: nil inputs give typed errors or documented
// no-ops.
func TestNothingPanicsOnNil(t *testing.T) {
	var reported []error
	onErr := shim.OnError(func(_ *nats.Msg, err error) { reported = append(reported, err) })
	fn := func(context.Context, *nats.Msg) ([]byte, error) { return nil, nil }
	shim.Handler(fn, onErr)(nil)
	shim.Handler(nil, onErr)(&nats.Msg{Subject: "x"})
	shim.Handler(fn, shim.BaseContext(func() context.Context { return nil }), onErr)(&nats.Msg{Subject: "x"})
	shim.JSONHandler[int, int](nil, onErr)(&nats.Msg{Subject: "x", Data: []byte("1")})
	if len(reported) != 3 || !errors.Is(reported[0], nats.ErrInvalidMsg) || !errors.Is(reported[1], nats.ErrInvalidArg) {
		t.Fatalf("reported %v", reported)
	}
	var c *shim.Client
	_, err := c.Request(context.Background(), "a", nil)
	notRun(t, "nil Client", err, shim.CodeInvalidArgument, nil)
	_, err = shim.NewClient(nil).Request(context.Background(), "a", nil)
	notRun(t, "nil connection", err, shim.CodeInvalidArgument, nats.ErrInvalidConnection)
	notRun(t, "publish on nil", shim.Publish(nil, "a", nil), shim.CodeInvalidArgument, nats.ErrInvalidConnection)
	notRun(t, "nil message", shim.PublishMsg(nil, nil), shim.CodeInvalidArgument, nats.ErrInvalidMsg)
	//lint:ignore SA1012 a nil context is the input under test
	notRun(t, "nil context", shim.PublishMsgContext(nil, nil, &nats.Msg{Subject: "a"}), shim.CodeInvalidArgument, nats.ErrInvalidContext) //nolint:staticcheck
	notRun(t, "respond nil", shim.Respond(nil, nil, nil), shim.CodeInvalidArgument, nats.ErrInvalidMsg)
	notRun(t, "respond micro nil", shim.RespondMicro(micro.Request(nil), nil, nil), shim.CodeInvalidArgument, nats.ErrInvalidMsg)
}

// TestInvalidOptionsWrapOneSentinel: every invalid option value, in shim
// and in claimcheck, is an error wrapping the same sentinel, and nil
// options are ignored in both.
func TestInvalidOptionsWrapOneSentinel(t *testing.T) {
	t.Parallel()
	if shim.ErrInvalidOption != claimcheck.ErrInvalidOption {
		t.Fatal("shim and claimcheck have different option sentinels")
	}
	s := natstest.Start(t, natstest.JetStream())
	nc := connect(t, s.URL())
	for name, opt := range map[string]shim.Option{
		"WithTimeout(0)":     shim.WithTimeout(0),
		"WithTimeout(-1s)":   shim.WithTimeout(-time.Second),
		"WithPayloadCap(0)":  shim.WithPayloadCap(0),
		"WithHeader(bad)":    shim.WithHeader("a b", "v"),
		"WithHeader(empty)":  shim.WithHeader("", "v"),
		"WithPayloadCap(-1)": shim.WithPayloadCap(-1),
	} {
		c := shim.NewClient(nc, nil, opt)
		_, err := c.Request(context.Background(), "a", nil)
		notRun(t, name, err, shim.CodeInvalidArgument, shim.ErrInvalidOption)
		if !errors.Is(c.Err(), shim.ErrInvalidOption) || !strings.Contains(err.Error(), strings.SplitN(name, "(", 2)[0]) {
			t.Fatalf("%s: Err() = %v", name, c.Err())
		}
	}
	c := shim.NewClient(nc, nil)
	_, err := c.Request(context.Background(), "a", nil, shim.Timeout(0))
	notRun(t, "Timeout(0)", err, shim.CodeInvalidArgument, shim.ErrInvalidOption)
	if _, err = c.Request(context.Background(), "a", nil, nil); !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("nil CallOption: %v, want the call to go out (no responders)", err)
	}

	var reported []error
	shim.Handler(func(context.Context, *nats.Msg) ([]byte, error) { return nil, nil },
		shim.BaseContext(nil), shim.OnError(func(_ *nats.Msg, err error) { reported = append(reported, err) }))(&nats.Msg{Subject: "x"})
	if len(reported) != 1 || !errors.Is(reported[0], shim.ErrInvalidOption) {
		t.Fatalf("BaseContext(nil): reported %v", reported)
	}
	shim.Handler(func(context.Context, *nats.Msg) ([]byte, error) { return nil, nil },
		shim.Conn(nil), shim.OnError(func(_ *nats.Msg, err error) { reported = append(reported, err) }))(&nats.Msg{Subject: "x"})
	if len(reported) != 2 || !errors.Is(reported[1], shim.ErrInvalidOption) {
		t.Fatalf("Conn(nil): reported %v", reported)
	}
}
