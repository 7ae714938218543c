package orders_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel"

	"github.com/natssend/natssend/claimcheck"
	orders "github.com/natssend/natssend/examples/safe"
	"github.com/natssend/natssend/shim"
)

// One order's trace: the caller's request, the handler, the announcement
// as a claim check (the upload) and the subscriber that resolves it, all
// in one trace, printed by the stdout exporter.
func TestTelemetryOneOrderOneTrace(t *testing.T) {
	tp, p := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	defer func() { otel.SetTracerProvider(tp); otel.SetTextMapPropagator(p) }()
	var out bytes.Buffer
	shutdown, err := orders.SetupTelemetry(&out)
	if err != nil {
		t.Fatal(err)
	}
	url := startServer(t, limit)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	svc, err := orders.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if _, err := orders.Serve(svc,
		func(_ context.Context, o orders.Order) (orders.Receipt, error) {
			return orders.Receipt{ID: o.ID, Status: "created"}, nil
		},
		func(_ context.Context, id string) (orders.Receipt, error) { return orders.Receipt{ID: id}, nil }); err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(svc)
	if err != nil {
		t.Fatal(err)
	}
	store, err := claimcheck.New(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan orders.Order, 1)
	if _, err := orders.Subscribe(store, func(o orders.Order) { got <- o }, func(err error) { t.Error(err) }); err != nil {
		t.Fatal(err)
	}
	if err := svc.Flush(); err != nil {
		t.Fatal(err)
	}
	nc, err := orders.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()

	ctx, span := otel.Tracer("orders-test").Start(ctx, "order o-1")
	o := orders.Order{ID: "o-1", Invoice: make([]byte, 3*limit)}
	if _, err := orders.Create(ctx, shim.NewClient(nc), orders.Order{ID: o.ID}); err != nil {
		t.Fatal(err)
	}
	pjs, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	pstore, err := claimcheck.New(ctx, pjs)
	if err != nil {
		t.Fatal(err)
	}
	if err := orders.PublishCreated(ctx, pstore, o); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-ctx.Done():
		t.Fatal("the announcement did not arrive")
	}
	// The subscriber's span ends when its handler returns, after got:
	// drain the connection, which waits for running handlers, first.
	closed := svc.StatusChanged(nats.CLOSED)
	if err := svc.Drain(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-closed:
	case <-ctx.Done():
		t.Fatal("the service connection did not drain")
	}
	span.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	traces := map[string]string{} // span name -> trace ID
	dec := json.NewDecoder(&out)
	for {
		var s struct {
			Name        string
			SpanContext struct{ TraceID string }
		}
		if err := dec.Decode(&s); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		traces[s.Name] = s.SpanContext.TraceID
	}
	want := traces["order o-1"]
	for _, name := range []string{"request orders.create", "process orders.create", "publish orders.created", "claimcheck_store orders.created", "process orders.created"} {
		if id, ok := traces[name]; !ok || id != want {
			t.Errorf("span %q: trace %q, want %q (spans: %v)", name, id, want, traces)
		}
	}
}
