package shim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// TestAddEndpoint: a Service added to a micro service as an endpoint
// answers through micro, so micro's discovery lists it and its stats count
// requests and errors (an error reply of any code is one error, with its
// code and message as the last error); replies over the limit are still
// refused (PAYLOAD_TOO_LARGE) or claim-checked for a caller that accepts
// them; JSON and stream Services work the same way.
func TestAddEndpoint(t *testing.T) {
	t.Parallel()
	const limit = 32 << 10
	s := natstest.Start(t, natstest.MaxPayload(limit), natstest.JetStream())
	nc := connect(t, s.URL())
	svc, err := micro.AddService(nc, micro.Config{Name: "orders", Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	st := newStore(t, nc)
	big := bytes.Repeat([]byte("r"), 4*limit)

	add := func(name string, s shim.Service) {
		t.Helper()
		if err := shim.AddEndpoint(svc, nc, name, s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	add("echo", shim.Unary(func(_ context.Context, m *nats.Msg) ([]byte, error) { return m.Data, nil }))
	add("reject", shim.Unary(func(context.Context, *nats.Msg) ([]byte, error) { return nil, shim.InvalidArgument("no such order") }))
	add("big", shim.Unary(func(context.Context, *nats.Msg) ([]byte, error) { return big, nil }))
	add("bigcc", shim.Unary(func(context.Context, *nats.Msg) ([]byte, error) { return big, nil }, shim.ServeClaimChecks(st)))
	add("total", shim.JSON(func(_ context.Context, req struct{ A, B int }) (int, error) { return req.A + req.B, nil }))
	add("stream", shim.Stream(func(_ context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		_, err := w.Write(big)
		return err
	}))

	if err := nc.Flush(); err != nil { // the endpoints' subscriptions are known to the server
		t.Fatal(err)
	}
	ctx := context.Background()
	c := shim.NewClient(connect(t, s.URL()), shim.WithTimeout(10*time.Second))
	if r, err := c.Request(ctx, "echo", []byte("hi")); err != nil || string(r.Data) != "hi" {
		t.Fatalf("echo: %v, %v", r, err)
	}
	_, err = c.Request(ctx, "reject", nil)
	if e := shim.Describe(err); e == nil || !e.Remote || e.Code != shim.CodeInvalidArgument || shim.Classify(err) != shim.OutcomeRejected {
		t.Errorf("reject: got %v, want a remote INVALID_ARGUMENT rejection", err)
	}
	_, err = c.Request(ctx, "big", nil)
	if !errors.Is(err, shim.ErrReplyTooLarge) {
		t.Errorf("big: got %v, want a PAYLOAD_TOO_LARGE error reply", err)
	}
	cc := shim.NewClient(connect(t, s.URL()), shim.WithClaimChecks(newStore(t, connect(t, s.URL()))), shim.WithTimeout(10*time.Second))
	if r, err := cc.Request(ctx, "bigcc", nil); err != nil || !bytes.Equal(r.Data, big) {
		t.Errorf("bigcc: %v, want the %d-byte reply", err, len(big))
	}
	r, err := c.Request(ctx, "total", []byte(`{"A":2,"B":3}`))
	if err != nil || string(r.Data) != "5" {
		t.Errorf("total: %v, %v", r, err)
	}
	rs, err := c.RequestStream(ctx, "stream", nil)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	got, err := io.ReadAll(rs)
	if err != nil || !bytes.Equal(got, big) {
		t.Errorf("stream: %v (%d bytes)", err, len(got))
	}

	// micro counts a request when its handler returns, and a stream's
	// returns once the caller has acknowledged the end: wait for that.
	stats := map[string]*micro.EndpointStats{}
	for wait := time.Now().Add(10 * time.Second); ; {
		for _, e := range svc.Stats().Endpoints {
			stats[e.Name] = e
		}
		if e := stats["stream"]; (e != nil && e.NumRequests > 0) || time.Now().After(wait) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	for name, want := range map[string]struct{ requests, errors int }{
		"echo": {1, 0}, "reject": {1, 1}, "big": {1, 1}, "bigcc": {1, 0}, "total": {1, 0}, "stream": {1, 0},
	} {
		e := stats[name]
		if e == nil {
			t.Errorf("%s: no stats", name)
			continue
		}
		if e.NumRequests != want.requests || e.NumErrors != want.errors {
			t.Errorf("%s: %d requests, %d errors; want %d, %d", name, e.NumRequests, e.NumErrors, want.requests, want.errors)
		}
	}
	if e := stats["reject"]; e != nil && e.LastError != "INVALID_ARGUMENT:no such order" {
		t.Errorf("reject: last error %q", e.LastError)
	}

	// Discovery, as any micro client sees it.
	m, err := nc.Request("$SRV.INFO.orders", nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var info micro.Info
	if err := json.Unmarshal(m.Data, &info); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, e := range info.Endpoints {
		names[e.Name] = true
	}
	for _, name := range []string{"echo", "reject", "big", "bigcc", "total", "stream"} {
		if !names[name] {
			t.Errorf("$SRV.INFO does not list %s: %v", name, info.Endpoints)
		}
	}

	// A Service that cannot serve is refused before anything is added.
	for name, bad := range map[string]shim.Service{"zero": {}, "nil": shim.Unary(nil)} {
		if err := shim.AddEndpoint(svc, nc, name, bad); shim.Classify(err) != shim.OutcomeNotRun || !errors.Is(err, nats.ErrInvalidArg) {
			t.Errorf("%s: got %v, want INVALID_ARGUMENT", name, err)
		}
	}
	if err := shim.AddEndpoint(nil, nc, "x", shim.Unary(func(context.Context, *nats.Msg) ([]byte, error) { return nil, nil })); err == nil {
		t.Error("a nil group was accepted")
	}
	if n := len(svc.Info().Endpoints); n != 6 {
		t.Errorf("%d endpoints after the refusals, want 6", n)
	}
}
