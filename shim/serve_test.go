package shim_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// TestServeKnowsItsConnection: a Service subscribed with Serve or
// ServeQueue uses the connection it is subscribed on (no ErrNoConn, its
// size refusals state the responder's limit, a stream works without a
// Conn option), a queue group shares the requests, and every Service that
// cannot serve is refused by Serve before anything is subscribed.
func TestServeKnowsItsConnection(t *testing.T) {
	t.Parallel()
	const limit = 16 << 10
	s := natstest.Start(t, natstest.MaxPayload(limit))
	resp := connect(t, s.URL())
	caller := connect(t, s.URL())
	c := shim.NewClient(caller, shim.WithTimeout(10*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var reported sync.Map
	onError := shim.OnError(func(_ *nats.Msg, err error) { reported.Store(err.Error(), err) })
	echo := shim.Unary(func(_ context.Context, m *nats.Msg) ([]byte, error) {
		if string(m.Data) == "big" {
			return make([]byte, limit+1), nil
		}
		return m.Data, nil
	}, onError)
	if _, err := shim.Serve(resp, "svc.echo", echo); err != nil {
		t.Fatal(err)
	}
	if err := resp.Flush(); err != nil {
		t.Fatal(err)
	}
	if r, err := c.Request(ctx, "svc.echo", []byte("hi")); err != nil || string(r.Data) != "hi" {
		t.Fatalf("echo: %v, %v", r, err)
	}
	_, err := c.Request(ctx, "svc.echo", []byte("big"))
	if !errors.Is(err, shim.ErrReplyTooLarge) {
		t.Fatalf("a reply over the limit: %v, want a PAYLOAD_TOO_LARGE error reply", err)
	}
	reported.Range(func(_, v any) bool {
		if errors.Is(v.(error), shim.ErrNoConn) {
			t.Error("a Service subscribed with Serve reported ErrNoConn")
		}
		var se *shim.Error
		if errors.As(v.(error), &se) && se.Code == shim.CodePayloadTooLarge && se.Limit != limit {
			t.Errorf("the size refusal states the limit %d, want the responder's %d", se.Limit, limit)
		}
		return true
	})

	// A queue group of two JSON services shares 40 requests, each answered once.
	type req struct{ N int }
	var served [2]atomic.Int64
	for i := range served {
		member := connect(t, s.URL())
		svc := shim.JSON(func(_ context.Context, r req) (req, error) {
			served[i].Add(1)
			return req{N: r.N * 2}, nil
		})
		if _, err := shim.ServeQueue(member, "svc.double", "workers", svc); err != nil {
			t.Fatal(err)
		}
		if err := member.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	for n := range 40 {
		r, err := c.Request(ctx, "svc.double", fmt.Appendf(nil, `{"N":%d}`, n))
		if err != nil || string(r.Data) != fmt.Sprintf(`{"N":%d}`, 2*n) {
			t.Fatalf("request %d: %v, %v", n, r, err)
		}
	}
	if a, b := served[0].Load(), served[1].Load(); a+b != 40 || a == 0 || b == 0 {
		t.Errorf("the queue group served %d and %d requests, want 40 shared by both", a, b)
	}

	// A stream: no Conn option needed.
	body := bytes.Repeat([]byte("0123456789abcdef"), 8<<10) // 128 KiB, above the limit
	if _, err := shim.Serve(resp, "svc.export", shim.Stream(func(_ context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		_, err := w.Write(body)
		return err
	})); err != nil {
		t.Fatal(err)
	}
	if err := resp.Flush(); err != nil {
		t.Fatal(err)
	}
	rs, err := c.RequestStream(ctx, "svc.export", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rs)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("stream: %d bytes, %v", len(got), err)
	}

	// Refused where it is built, nothing subscribed.
	other := connect(t, s.URL())
	closed := connect(t, s.URL())
	closed.Close()
	subs := resp.NumSubscriptions()
	for name, try := range map[string]func() (*nats.Subscription, error){
		"nil HandlerFunc":       func() (*nats.Subscription, error) { return shim.Serve(resp, "x", shim.Unary(nil)) },
		"nil JSON function":     func() (*nats.Subscription, error) { return shim.Serve(resp, "x", shim.JSON[req, req](nil)) },
		"nil StreamHandlerFunc": func() (*nats.Subscription, error) { return shim.Serve(resp, "x", shim.Stream(nil)) },
		"invalid option": func() (*nats.Subscription, error) {
			return shim.Serve(resp, "x", shim.Unary(echoFn, shim.BaseContext(nil)))
		},
		"zero Service": func() (*nats.Subscription, error) { return shim.Serve(resp, "x", shim.Service{}) },
		"Conn of another connection": func() (*nats.Subscription, error) {
			return shim.Serve(resp, "x", shim.Unary(echoFn, shim.Conn(other)))
		},
		"nil connection":      func() (*nats.Subscription, error) { return shim.Serve(nil, "x", echo) },
		"invalid subject":     func() (*nats.Subscription, error) { return shim.Serve(resp, "a b", echo) },
		"empty queue group":   func() (*nats.Subscription, error) { return shim.ServeQueue(resp, "x", "", echo) },
		"invalid queue group": func() (*nats.Subscription, error) { return shim.ServeQueue(resp, "x", "a b", echo) },
	} {
		sub, err := try()
		var se *shim.Error
		if sub != nil || !errors.As(err, &se) || se.Code != shim.CodeInvalidArgument || shim.Classify(err) != shim.OutcomeNotRun {
			t.Errorf("%s: %v, %v; want an INVALID_ARGUMENT refusal and no subscription", name, sub, err)
		}
	}
	if n := resp.NumSubscriptions(); n != subs {
		t.Errorf("%d subscriptions after the refusals, want %d", n, subs)
	}
	if sub, err := shim.Serve(closed, "x", echo); sub != nil || shim.Describe(err).Code != shim.CodeUnavailable || !errors.Is(err, nats.ErrConnectionClosed) {
		t.Errorf("on a closed connection: %v, %v; want UNAVAILABLE", sub, err)
	}
	// The same connection named by Conn is fine.
	if _, err := shim.Serve(resp, "svc.same", shim.Unary(echoFn, shim.Conn(resp))); err != nil {
		t.Errorf("Conn of the same connection: %v", err)
	}
}

func echoFn(_ context.Context, m *nats.Msg) ([]byte, error) { return m.Data, nil }
