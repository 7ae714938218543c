package shim_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
	"github.com/natssend/natssend/telemetry"
)

// TestTelemetrySizesStayOnTheirOwnSpan: a send made in a handler's fn by a
// Client that records nothing (fn's context carries the handler's span)
// writes none of its sizes on the handler's span, whose envelope size
// stays that of the request it received.
func TestTelemetrySizesStayOnTheirOwnSpan(t *testing.T) {
	s := natstest.Start(t)
	serve(t, s, "nest.inner", shim.Handler(func(ctx context.Context, req *nats.Msg) ([]byte, error) { return nil, nil }))
	inner := shim.NewClient(connect(t, s.URL()), shim.WithTelemetry(telemetry.WithoutTelemetry()))
	hk := newOtelKit(t)
	serve(t, s, "nest.outer", shim.Handler(func(ctx context.Context, req *nats.Msg) ([]byte, error) {
		_, err := inner.Request(ctx, "nest.inner", make([]byte, 1000))
		return nil, err
	}, shim.Telemetry(telemetry.WithTracerProvider(hk.tp), telemetry.WithPropagators(hk.prop))))
	req := &nats.Msg{Subject: "nest.outer", Data: []byte("abc"), Header: nats.Header{"K": {"v"}}}
	if _, err := connect(t, s.URL()).RequestMsg(req, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	hs := hk.span(t, "process nest.outer")
	if got, want := attr(hs, "messaging.message.envelope.size").AsInt64(), int64(shim.MsgSize(req)); got != want {
		t.Fatalf("handler span envelope size %d, want %d (the request it received)", got, want)
	}
	if v := attr(hs, "natssend.claimcheck.size"); v.Type() != 0 {
		t.Fatalf("handler span got natssend.claimcheck.size %v", v.String())
	}
}
