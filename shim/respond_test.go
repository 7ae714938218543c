package shim_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

func TestReplyExactlyAtLimitAndOneOver(t *testing.T) {
	t.Parallel()
	const limit = 1024
	s := natstest.Start(t, natstest.MaxPayload(limit))
	replyHdr := nats.Header{"Content-Type": {"application/octet-stream"}}
	fit := limit - shim.HeaderSize(replyHdr)
	var runs counter
	respErrs := make(chan error, 4)
	responder := serve(t, s, "svc", func(m *nats.Msg) {
		runs.inc()
		n := fit
		if string(m.Data) == "over" {
			n++
		}
		respErrs <- shim.Respond(m, make([]byte, n), replyHdr)
	})
	c := shim.NewClient(connect(t, s.URL()), shim.WithTimeout(5*time.Second))

	reply, err := c.Request(context.Background(), "svc", []byte("fit"))
	if err != nil {
		t.Fatalf("reply of exactly %d bytes: %v", limit, err)
	}
	if shim.MsgSize(reply) != limit {
		t.Fatalf("reply size %d, want %d", shim.MsgSize(reply), limit)
	}
	if err := <-respErrs; err != nil {
		t.Fatalf("Respond at the limit: %v", err)
	}

	start := time.Now()
	_, err = c.Request(context.Background(), "svc", []byte("over"))
	var se *shim.Error
	if !errors.As(err, &se) || se.Code != shim.CodePayloadTooLarge || !se.Remote || !errors.Is(err, shim.ErrPayloadTooLarge) || !errors.Is(err, shim.ErrReplyTooLarge) {
		t.Fatalf("one byte over: want a remote PAYLOAD_TOO_LARGE, got %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatal("the caller waited for its timeout instead of getting the error reply")
	}
	if !strings.Contains(se.Message, "may already have completed") || shim.Classify(err) != shim.OutcomeUnknown {
		t.Fatalf("the caller must learn the outcome is unknown: %q, %v", se.Message, shim.Classify(err))
	}
	rerr := <-respErrs
	var re *shim.Error
	if !errors.As(rerr, &re) || !errors.Is(rerr, shim.ErrPayloadTooLarge) || !errors.Is(rerr, nats.ErrMaxPayload) || re.Size != limit+1 {
		t.Fatalf("Respond's own error: %v", rerr)
	}
	if runs.get() != 2 {
		t.Fatalf("responder ran %d times, want 2 (once per request)", runs.get())
	}
	if err := responder.Flush(); err != nil || responder.IsClosed() {
		t.Fatalf("responder's connection not usable after the oversized reply: %v", err)
	}
	if _, err := c.Request(context.Background(), "svc", []byte("fit")); err != nil {
		t.Fatalf("responder cannot serve after the oversized reply: %v", err)
	}
}

func TestRespondSendsOnlyReplyHeaders(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	serve(t, s, "svc", func(m *nats.Msg) {
		_ = shim.Respond(m, []byte("ok"), nats.Header{"X-Reply": {"1"}})
	})
	c := shim.NewClient(connect(t, s.URL()), shim.WithHeader("Authorization", "Bearer secret"))
	reply, err := c.RequestMsg(context.Background(), &nats.Msg{Subject: "svc", Header: nats.Header{"X-Req": {"1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(reply.Header) != 1 || reply.Header.Get("X-Reply") != "1" {
		t.Fatalf("reply headers %v: want only the reply's own", reply.Header)
	}
}

func TestRespondErrorIsMicroCompatible(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	serve(t, s, "svc", func(m *nats.Msg) { _ = shim.RespondError(m, "404", "no such order") })
	nc := connect(t, s.URL())
	raw, err := nc.Request("svc", nil, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if raw.Header.Get(micro.ErrorCodeHeader) != "404" || raw.Header.Get(micro.ErrorHeader) != "no such order" || len(raw.Data) != 0 {
		t.Fatalf("error reply on the wire: %v %q", raw.Header, raw.Data)
	}
}

func TestRespondRejectsBadInput(t *testing.T) {
	for name, err := range map[string]error{
		"nil request":   shim.Respond(nil, nil, nil),
		"no reply":      shim.Respond(&nats.Msg{Subject: "x"}, nil, nil),
		"empty code":    shim.RespondError(&nats.Msg{Subject: "x", Reply: "r", Sub: &nats.Subscription{}}, "", "m"),
		"bad key":       shim.Respond(&nats.Msg{Subject: "x", Reply: "r", Sub: &nats.Subscription{}}, nil, nats.Header{"bad key": {"v"}}),
		"micro nil req": shim.RespondMicro(nil, nil, nil),
	} {
		var se *shim.Error
		if !errors.As(err, &se) || se.Code != shim.CodeInvalidArgument {
			t.Errorf("%s: want INVALID_ARGUMENT, got %v", name, err)
		}
	}
	if err := shim.Respond(&nats.Msg{Subject: "x"}, nil, nil); !errors.Is(err, nats.ErrMsgNoReply) {
		t.Errorf("no reply subject: want nats.ErrMsgNoReply, got %v", err)
	}
}

func TestHandlerAdapter(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	var domainWork counter
	type order struct {
		ID string `json:"id"`
	}
	serve(t, s, "orders.get", shim.JSONHandler(func(ctx context.Context, o order) (order, error) {
		domainWork.inc()
		switch o.ID {
		case "panic":
			panic("boom")
		case "missing":
			return order{}, shim.Reject("NOT_FOUND", "no order "+o.ID)
		case "conflict":
			return order{}, &shim.Error{Code: "CONFLICT", Message: "version conflict"}
		case "plain":
			return order{}, errors.New("db down")
		}
		return o, nil
	}))
	c := shim.NewClient(connect(t, s.URL()))
	ctx := context.Background()

	_, err := c.Request(ctx, "orders.get", []byte("{not json"))
	var se *shim.Error
	if !errors.As(err, &se) || se.Code != shim.CodeInvalidArgument || shim.Classify(err) != shim.OutcomeRejected {
		t.Fatalf("bad JSON: want INVALID_ARGUMENT, got %v", err)
	}
	if domainWork.get() != 0 {
		t.Fatal("domain work ran for an undecodable request")
	}
	for id, want := range map[string]struct {
		code    string
		outcome shim.Outcome
	}{
		"panic":    {shim.CodeInternal, shim.OutcomeUnknown},
		"missing":  {"NOT_FOUND", shim.OutcomeRejected}, // marked by Reject
		"conflict": {"CONFLICT", shim.OutcomeUnknown},   // built by hand: code kept, not marked
		"plain":    {shim.CodeInternal, shim.OutcomeUnknown},
	} {
		_, err := c.Request(ctx, "orders.get", []byte(fmt.Sprintf(`{"id":%q}`, id)))
		if !errors.As(err, &se) || se.Code != want.code || !se.Remote || shim.Classify(err) != want.outcome {
			t.Errorf("%s: want remote %s (%v), got %v (%v)", id, want.code, want.outcome, err, shim.Classify(err))
		}
	}
	_, err = c.Request(ctx, "orders.get", []byte(`{"id":"plain"}`))
	if !errors.As(err, &se) || se.Message != "db down" {
		t.Errorf("plain error text: %v", err)
	}
	reply, err := c.Request(ctx, "orders.get", []byte(`{"id":"42"}`))
	if err != nil || string(reply.Data) != `{"id":"42"}` {
		t.Fatalf("success: %v %q", err, reply.Data)
	}
}

func TestHandlerReportsWhatItCannotReturn(t *testing.T) {
	var mu sync.Mutex
	var reported []error
	h := shim.Handler(func(ctx context.Context, m *nats.Msg) ([]byte, error) {
		if string(m.Data) == "panic" {
			panic("boom")
		}
		return nil, errors.New("no reply subject to send this to")
	}, shim.OnError(func(_ *nats.Msg, err error) { mu.Lock(); reported = append(reported, err); mu.Unlock() }),
		shim.BaseContext(func() context.Context { return nil }))
	h(&nats.Msg{Subject: "x"})
	h(&nats.Msg{Subject: "x", Data: []byte("panic")})
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 3 || !strings.Contains(reported[0].Error(), "no reply subject") ||
		!strings.Contains(reported[1].Error(), "boom") {
		t.Fatalf("reported %v", reported)
	}
}

// TestWrappedDownstreamErrorIsNotARejection: a handler that did work and
// then failed on a downstream call must not pass the downstream's code
// through as if it had refused the request.
func TestWrappedDownstreamErrorIsNotARejection(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	down := shim.NewClient(connect(t, s.URL()))
	serve(t, s, "charge", shim.Handler(func(ctx context.Context, m *nats.Msg) ([]byte, error) {
		// ... the card was charged here ...
		_, err := down.Request(ctx, "inventory.reserve", m.Data) // nobody listens
		return nil, fmt.Errorf("inventory: %w", err)
	}))
	c := shim.NewClient(connect(t, s.URL()))
	_, err := c.Request(context.Background(), "charge", []byte("x"))
	var se *shim.Error
	if !errors.As(err, &se) || se.Code != shim.CodeInternal || !shim.MayHaveRun(err) {
		t.Fatalf("want a remote INTERNAL whose outcome is unknown, got %v (%v)", err, shim.Classify(err))
	}
	if errors.Is(err, nats.ErrNoResponders) {
		t.Fatal("the downstream's no-responders must not look like the caller's own")
	}
}

func TestRemoteCodesClassification(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	serve(t, s, "codes", func(m *nats.Msg) { _ = shim.RespondError(m, string(m.Data), "x") })
	c := shim.NewClient(connect(t, s.URL()))
	for code, want := range map[string]shim.Outcome{
		shim.CodeInvalidArgument: shim.OutcomeRejected,
		"404":                    shim.OutcomeRejected,
		"500":                    shim.OutcomeUnknown,
		"503":                    shim.OutcomeUnknown,
		"NOT_FOUND":              shim.OutcomeUnknown, // unmarked custom code: unknown
		shim.CodeInternal:        shim.OutcomeUnknown,
		shim.CodePayloadTooLarge: shim.OutcomeUnknown,
	} {
		_, err := c.Request(context.Background(), "codes", []byte(code))
		if got := shim.Classify(err); got != want {
			t.Errorf("remote %s: outcome %v, want %v (%v)", code, got, want, err)
		}
	}
}

func TestRespondMicroOversizeReachesCaller(t *testing.T) {
	t.Parallel()
	const limit = 1024
	s := natstest.Start(t, natstest.MaxPayload(limit))
	svcConn := connect(t, s.URL())
	respErr := make(chan error, 1)
	svc, err := micro.AddService(svcConn, micro.Config{
		Name: "blobs", Version: "1.0.0",
		Endpoint: &micro.EndpointConfig{Subject: "blobs.get", Handler: micro.HandlerFunc(func(r micro.Request) {
			respErr <- shim.RespondMicro(r, make([]byte, limit+1), nil)
		})},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = svc.Stop() }()
	if err := svcConn.Flush(); err != nil {
		t.Fatal(err)
	}
	c := shim.NewClient(connect(t, s.URL()), shim.WithTimeout(5*time.Second))
	start := time.Now()
	_, err = c.Request(context.Background(), "blobs.get", nil)
	if !errors.Is(err, shim.ErrPayloadTooLarge) || time.Since(start) > 2*time.Second {
		t.Fatalf("want a prompt PAYLOAD_TOO_LARGE, got %v after %v", err, time.Since(start))
	}
	if err := <-respErr; !errors.Is(err, shim.ErrPayloadTooLarge) {
		t.Fatalf("RespondMicro returned %v", err)
	}
	if svcConn.IsClosed() {
		t.Fatal("service connection closed")
	}
}

func TestClassifyHandBuiltError(t *testing.T) {
	if got := shim.Classify(&shim.Error{Code: "X"}); got != shim.OutcomeUnknown {
		t.Fatalf("a hand-built *Error: %v, want unknown", got)
	}
	if got := shim.Classify(fmt.Errorf("wrapped: %w", shim.InvalidArgument("bad"))); got != shim.OutcomeRejected {
		t.Fatalf("a wrapped rejection: %v", got)
	}
	if got := shim.Classify(errors.New("plain")); got != shim.OutcomeUnknown || !shim.MayHaveRun(errors.New("plain")) {
		t.Fatalf("a foreign error: %v", got)
	}
	if shim.Classify(nil) != shim.OutcomeOK {
		t.Fatal("nil")
	}
}
