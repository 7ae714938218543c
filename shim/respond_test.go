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
	if !errors.As(err, &se) || se.Code != shim.CodePayloadTooLarge || !se.Remote || !errors.Is(err, shim.ErrPayloadTooLarge) {
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
			return order{}, shim.NewError("NOT_FOUND", "no order "+o.ID)
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
	for id, code := range map[string]string{"panic": shim.CodeInternal, "missing": "NOT_FOUND", "plain": shim.CodeInternal} {
		_, err := c.Request(ctx, "orders.get", []byte(fmt.Sprintf(`{"id":%q}`, id)))
		if !errors.As(err, &se) || se.Code != code || !se.Remote {
			t.Errorf("%s: want remote %s, got %v", id, code, err)
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

func TestHandlerSkipsRequestsWhoseCallerGaveUp(t *testing.T) {
	s := natstest.Start(t)
	var runs counter
	var reported []error
	var mu sync.Mutex
	h := shim.Handler(func(ctx context.Context, m *nats.Msg) ([]byte, error) {
		runs.inc()
		return nil, nil
	}, shim.OnError(func(_ *nats.Msg, err error) { mu.Lock(); reported = append(reported, err); mu.Unlock() }))
	h(&nats.Msg{Subject: "x", Header: nats.Header{shim.HeaderTimeout: {"0"}}})
	if runs.get() != 0 {
		t.Fatal("handler ran for a request whose caller had given up")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 1 || !errors.Is(reported[0], shim.ErrCallerGone) {
		t.Fatalf("reported %v", reported)
	}
	_ = s
}

func TestRespondMicroOversizeReachesCaller(t *testing.T) {
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
