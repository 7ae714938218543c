package shim_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/attribute"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
	"github.com/natssend/natssend/telemetry"
)

// TestClientReportsCleanupItCouldNotFinish: the caller's deletion of a
// claim-checked reply it read is lost on the way (its purge requests are
// dropped after the Store's first, the delete-permission probe): the call
// still succeeds, and the payload left for the TTL is reported as
// natssend.claimcheck.cleanup.failures (error.type DEADLINE_EXCEEDED),
// where the Client used to discard the error.
func TestClientReportsCleanupItCouldNotFinish(t *testing.T) {
	s := natstest.Start(t, natstest.MaxPayload(overflowLimit), natstest.JetStream())
	p := s.Proxy(t)
	p.On(natstest.Rule{Dir: natstest.ToServer, Op: "PUB", Subject: "$JS.API.STREAM.PURGE.>", Nth: 2, Every: true, Action: natstest.Drop})
	rnc := connect(t, s.URL())
	rst := newStore(t, rnc)
	nc := connect(t, p.URL())
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	cst, err := claimcheck.New(context.Background(), js, claimcheck.WithStorage(jetstream.MemoryStorage), claimcheck.WithCleanupTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	reply := payload(3*overflowLimit, 61)
	if _, err := rnc.Subscribe("svc", shim.Handler(func(context.Context, *nats.Msg) ([]byte, error) { return reply, nil }, shim.Conn(rnc), shim.ServeClaimChecks(rst))); err != nil {
		t.Fatal(err)
	}
	if err := rnc.Flush(); err != nil {
		t.Fatal(err)
	}
	k := newOtelKit(t)
	c := shim.NewClient(nc, shim.WithClaimChecks(cst), shim.WithTimeout(10*time.Second),
		shim.WithTelemetry(telemetry.WithMeterProvider(k.mp), telemetry.WithTracerProvider(k.tp)))
	got, err := c.Request(context.Background(), "svc", nil)
	if err != nil || !bytes.Equal(got.Data, reply) {
		t.Fatalf("Request: %v", err)
	}
	natstest.Eventually(t, 10*time.Second, func() bool {
		n, ok := k.counterValue(t, "natssend.claimcheck.cleanup.failures", attribute.String("error.type", shim.CodeDeadlineExceeded))
		return ok && n >= 1
	}, "the clean-up failure reported")
}
