package shim_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
	"github.com/natssend/natssend/telemetry"
)

// telClient is a Client and a handler on subject, each with its own SDK
// (as two services would have).
func telPair(t *testing.T, s *natstest.Server, subject string, fn shim.HandlerFunc, hopts ...shim.HandlerOption) (*otelKit, *otelKit, *shim.Client) {
	t.Helper()
	ck, hk := newOtelKit(t), newOtelKit(t)
	hnc := connect(t, s.URL())
	hopts = append([]shim.HandlerOption{shim.Conn(hnc), shim.Telemetry(telemetry.WithTracerProvider(hk.tp), telemetry.WithMeterProvider(hk.mp), telemetry.WithPropagators(hk.prop))}, hopts...)
	if _, err := hnc.Subscribe(subject, shim.Handler(fn, hopts...)); err != nil {
		t.Fatal(err)
	}
	if err := hnc.Flush(); err != nil {
		t.Fatal(err)
	}
	c := shim.NewClient(connect(t, s.URL()), shim.WithTelemetry(telemetry.WithTracerProvider(ck.tp), telemetry.WithMeterProvider(ck.mp), telemetry.WithPropagators(ck.prop)))
	return ck, hk, c
}

func TestTelemetryRequestHandlerParentChild(t *testing.T) {
	s := natstest.Start(t)
	var fnSpan trace.SpanContext
	ck, hk, c := telPair(t, s, "tel.echo", func(ctx context.Context, req *nats.Msg) ([]byte, error) {
		fnSpan = trace.SpanContextFromContext(ctx)
		return req.Data, nil
	})
	ctx, parent := ck.tp.Tracer("test").Start(context.Background(), "parent")
	h := nats.Header{"Own": {"v"}}
	m := &nats.Msg{Subject: "tel.echo", Data: []byte("hello"), Header: h}
	if _, err := c.RequestMsg(ctx, m); err != nil {
		t.Fatal(err)
	}
	parent.End()
	if len(h) != 1 || len(m.Header) != 1 {
		t.Fatalf("the caller's header was modified: %v", m.Header)
	}

	cs := ck.span(t, "request tel.echo")
	kindIs(t, cs, trace.SpanKindClient)
	parentOf(t, cs, ck.span(t, "parent"), false)
	checkAttrs(t, cs, map[string]string{"messaging.system": "nats", "messaging.destination.name": "tel.echo",
		"messaging.operation.type": "send", "messaging.operation.name": "request", "natssend.outcome": "ok"})
	if got := attr(cs, "messaging.message.body.size").AsInt64(); got != 5 {
		t.Errorf("body size %d, want 5", got)
	}
	if cs.Status().Code == codes.Error {
		t.Errorf("ok span has status %v", cs.Status())
	}

	hs := hk.span(t, "process tel.echo")
	kindIs(t, hs, trace.SpanKindServer)
	parentOf(t, hs, cs, true)
	if !hs.Parent().IsSampled() {
		t.Error("remote parent lost its sampled flag")
	}
	checkAttrs(t, hs, map[string]string{"messaging.operation.type": "process", "natssend.outcome": "ok"})
	if fnSpan.SpanID() != hs.SpanContext().SpanID() {
		t.Errorf("fn's context carries span %v, want the server span %v", fnSpan.SpanID(), hs.SpanContext().SpanID())
	}

	ok := attribute.String("natssend.outcome", "ok")
	dest := attribute.String("messaging.destination.name", "tel.echo")
	if n, _ := ck.counterValue(t, "messaging.client.sent.messages", dest, ok); n != 1 {
		t.Errorf("sent messages %d, want 1", n)
	}
	if n, _ := ck.counterValue(t, "messaging.client.operation.duration", dest, ok); n != 1 {
		t.Errorf("duration points %d, want 1", n)
	}
	if n, _ := hk.counterValue(t, "messaging.client.consumed.messages", dest, ok); n != 1 {
		t.Errorf("consumed messages %d, want 1", n)
	}
}

func TestTelemetryOutcomes(t *testing.T) {
	s := natstest.Start(t)
	release := make(chan struct{})
	ck, hk, c := telPair(t, s, "tel.out.*", func(ctx context.Context, req *nats.Msg) ([]byte, error) {
		switch req.Subject {
		case "tel.out.reject":
			return nil, shim.InvalidArgument("no")
		case "tel.out.slow":
			<-release // past the caller's deadline: it times out
			return nil, nil
		}
		return nil, errors.New("boom")
	}, shim.Telemetry(telemetry.WithDestinationName(func(string) string { return "tel.out.*" })))
	for _, tc := range []struct {
		subject, outcome, code string
	}{
		{"tel.none", "not_run", shim.CodeNoResponders},
		{"tel.out.reject", "rejected", shim.CodeInvalidArgument},
		{"tel.out.slow", "unknown", shim.CodeDeadlineExceeded},
		{"tel.out.fail", "unknown", shim.CodeInternal},
	} {
		if tc.subject == "tel.out.fail" {
			close(release)
		}
		_, err := c.Request(context.Background(), tc.subject, []byte("x"), shim.Timeout(300*time.Millisecond))
		if err == nil {
			t.Fatalf("%s: no error", tc.subject)
		}
		sp := ck.span(t, "request "+tc.subject)
		checkAttrs(t, sp, map[string]string{"natssend.outcome": tc.outcome, "natssend.error.code": tc.code})
		if sp.Status().Code != codes.Error {
			t.Errorf("%s: status %v, want Error", tc.subject, sp.Status())
		}
		if n, _ := ck.counterValue(t, "messaging.client.sent.messages", attribute.String("messaging.destination.name", tc.subject), attribute.String("natssend.outcome", tc.outcome)); n != 1 {
			t.Errorf("%s: sent messages with outcome %s: %d, want 1", tc.subject, tc.outcome, n)
		}
	}
	// The handler side: the destination template, fn's outcomes.
	natstest.Eventually(t, 10*time.Second, func() bool { return len(hk.spans("process tel.out.*")) == 3 }, "3 handler spans")
	outcomes := map[string]int{}
	for _, sp := range hk.spans("process tel.out.*") {
		o := attr(sp, "natssend.outcome").AsString()
		outcomes[o]++
		if (o == "ok") != (sp.Status().Code != codes.Error) {
			t.Errorf("handler span with outcome %q has status %v", o, sp.Status())
		}
	}
	// The slow handler ran fine; its reply came after the caller gave up.
	if outcomes["ok"] != 1 || outcomes["rejected"] != 1 || outcomes["unknown"] != 1 {
		t.Errorf("handler outcomes %v, want one each of ok, rejected, unknown", outcomes)
	}
}

// The injected trace headers count toward max_payload: a request that
// fits exactly with them is sent; one byte more is refused before sending,
// although it would fit without them, and the connection stays open.
func TestTelemetryInjectedHeadersCountAtTheExactByte(t *testing.T) {
	const limit = 1024
	s := natstest.Start(t, natstest.MaxPayload(limit))
	var got nats.Header
	ck, _, _ := telPair(t, s, "tel.size", func(ctx context.Context, req *nats.Msg) ([]byte, error) {
		got = req.Header
		return nil, nil
	})
	c := shim.NewClient(connect(t, s.URL()), shim.WithTelemetry(telemetry.WithTracerProvider(ck.tp), telemetry.WithPropagators(propagation.TraceContext{})), shim.WithTimeout(time.Hour))
	ctx, parent := ck.tp.Tracer("test").Start(context.Background(), "parent")
	defer parent.End()
	// The request's header: the timeout (7 digits for an hour), the
	// connection's limit and traceparent (55 bytes).
	hdr := shim.HeaderSize(nats.Header{shim.HeaderTimeout: {"3599999"}, shim.HeaderMaxPayload: {"1024"}, "Traceparent": {strings.Repeat("0", 55)}})
	withoutTrace := shim.HeaderSize(nats.Header{shim.HeaderTimeout: {"3599999"}, shim.HeaderMaxPayload: {"1024"}})
	body := limit - hdr
	if _, err := c.Request(ctx, "tel.size", make([]byte, body)); err != nil {
		t.Fatalf("request of exactly %d bytes with its trace header: %v", limit, err)
	}
	if len(got.Get("Traceparent")) != 55 {
		t.Fatalf("handler got traceparent %q", got.Get("Traceparent"))
	}
	if body+1+withoutTrace > limit {
		t.Fatal("test setup: one byte more must fit without the trace header")
	}
	_, err := c.Request(ctx, "tel.size", make([]byte, body+1))
	var e *shim.Error
	if !errors.As(err, &e) || e.Code != shim.CodePayloadTooLarge || e.Size != limit+1 || e.Limit != limit {
		t.Fatalf("one byte over with the trace header: %v (%+v), want PAYLOAD_TOO_LARGE of %d over %d", err, e, limit+1, limit)
	}
	if shim.Classify(err) != shim.OutcomeNotRun {
		t.Errorf("outcome %v, want not run", shim.Classify(err))
	}
	spans := ck.spans("request tel.size")
	if len(spans) != 2 || attr(spans[1], "natssend.error.code").AsString() != shim.CodePayloadTooLarge {
		t.Fatalf("spans %d; the refused one's code %q", len(spans), attr(spans[len(spans)-1], "natssend.error.code").AsString())
	}
	// The envelope size is the size the decision compared, to the byte.
	for i, want := range []int64{limit, limit + 1} {
		if got := attr(spans[i], "messaging.message.envelope.size").AsInt64(); got != want {
			t.Errorf("request %d: messaging.message.envelope.size %d, want %d", i, got, want)
		}
	}
	// The connection is still usable.
	if _, err := c.Request(ctx, "tel.size", []byte("small")); err != nil {
		t.Fatal(err)
	}
}

func TestTelemetryWithoutTelemetry(t *testing.T) {
	s := natstest.Start(t)
	ck, hk, _ := telPair(t, s, "tel.off", func(ctx context.Context, req *nats.Msg) ([]byte, error) {
		if propagation.HeaderCarrier(req.Header).Get("traceparent") != "" || req.Header.Get("traceparent") != "" {
			return nil, shim.InvalidArgument("trace header sent")
		}
		return nil, nil
	})
	c := shim.NewClient(connect(t, s.URL()), shim.WithTelemetry(telemetry.WithTracerProvider(ck.tp), telemetry.WithPropagators(ck.prop), telemetry.WithoutTelemetry()))
	ctx, parent := ck.tp.Tracer("test").Start(context.Background(), "parent")
	defer parent.End()
	if _, err := c.Request(ctx, "tel.off", nil); err != nil {
		t.Fatal(err)
	}
	if len(ck.spans("request tel.off")) != 0 {
		t.Fatal("a Client WithoutTelemetry recorded a span")
	}
	// Nor does it write its sizes on the caller's span.
	parent.End()
	if kv := ck.span(t, "parent").Attributes(); len(kv) != 0 {
		t.Fatalf("the caller's span got attributes %v", kv)
	}
	// The handler starts a root span: the request carried no trace.
	if hs := hk.span(t, "process tel.off"); hs.Parent().IsValid() {
		t.Fatalf("handler span has parent %v", hs.Parent())
	}
}

// TestTelemetryInvalidOptions: each invalid option of the one telemetry
// set is refused, with ErrInvalidOption naming it, by the Client, by a
// handler where it is built (Serve) and by a Store (New), before anything
// is subscribed or created.
func TestTelemetryInvalidOptions(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t, natstest.JetStream())
	nc := connect(t, s.URL())
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]telemetry.Option{
		"WithTracerProvider":  telemetry.WithTracerProvider(nil),
		"WithMeterProvider":   telemetry.WithMeterProvider(nil),
		"WithPropagators":     telemetry.WithPropagators(nil),
		"WithDestinationName": telemetry.WithDestinationName(nil),
	} {
		if err := shim.NewClient(nc, shim.WithTelemetry(o)).Err(); !errors.Is(err, shim.ErrInvalidOption) || !strings.Contains(err.Error(), name) {
			t.Errorf("Client: got %v, want ErrInvalidOption naming %s", err, name)
		}
		sub, err := shim.Serve(nc, "tel.invalid", shim.Unary(func(context.Context, *nats.Msg) ([]byte, error) { return nil, nil }, shim.Telemetry(o)))
		if sub != nil || !errors.Is(err, shim.ErrInvalidOption) || !strings.Contains(err.Error(), name) {
			t.Errorf("Serve: got %v, %v, want ErrInvalidOption naming %s", sub, err, name)
		}
		st, err := claimcheck.New(context.Background(), js, claimcheck.WithBucket("tel_invalid"), claimcheck.WithTelemetry(o))
		if st != nil || !errors.Is(err, claimcheck.ErrInvalidOption) || !strings.Contains(err.Error(), name) {
			t.Errorf("Store: got %v, %v, want ErrInvalidOption naming %s", st, err, name)
		}
	}
	if n := nc.NumSubscriptions(); n != 0 {
		t.Errorf("%d subscriptions made by refused handlers", n)
	}
	if _, err := js.ObjectStore(context.Background(), "tel_invalid"); !errors.Is(err, jetstream.ErrBucketNotFound) {
		t.Errorf("a refused Store left its bucket: %v", err)
	}
	// A nil option in the set is skipped, as nil options are everywhere.
	if err := shim.NewClient(nc, shim.WithTelemetry(nil, telemetry.WithoutTelemetry())).Err(); err != nil {
		t.Errorf("a nil telemetry option: %v", err)
	}
}

// A claim-checked request: the reference carries the trace context, the
// request span says the claim check's size, the upload is its child.
func TestTelemetryClaimCheckedRequest(t *testing.T) {
	const limit = 32 << 10
	s := natstest.Start(t, natstest.MaxPayload(limit), natstest.JetStream())
	ck, hk := newOtelKit(t), newOtelKit(t)
	store := func(nc *nats.Conn, k *otelKit) *claimcheck.Store {
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		st, err := claimcheck.New(context.Background(), js, claimcheck.WithStorage(jetstream.MemoryStorage),
			claimcheck.WithTelemetry(telemetry.WithTracerProvider(k.tp), telemetry.WithMeterProvider(k.mp), telemetry.WithPropagators(k.prop)))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	hnc, cnc := connect(t, s.URL()), connect(t, s.URL())
	var n int
	if _, err := hnc.Subscribe("tel.cc", shim.Handler(func(ctx context.Context, req *nats.Msg) ([]byte, error) {
		n = len(req.Data)
		return []byte("ok"), nil
	}, shim.Conn(hnc), shim.ServeClaimChecks(store(hnc, hk)), shim.Telemetry(telemetry.WithTracerProvider(hk.tp), telemetry.WithPropagators(hk.prop)))); err != nil {
		t.Fatal(err)
	}
	if err := hnc.Flush(); err != nil {
		t.Fatal(err)
	}
	c := shim.NewClient(cnc, shim.WithClaimChecks(store(cnc, ck)), shim.WithTelemetry(telemetry.WithTracerProvider(ck.tp), telemetry.WithMeterProvider(ck.mp), telemetry.WithPropagators(ck.prop)), shim.WithTimeout(30*time.Second))
	const big = 50 << 10
	if _, err := c.Request(context.Background(), "tel.cc", make([]byte, big)); err != nil {
		t.Fatal(err)
	}
	if n != big {
		t.Fatalf("handler got %d bytes", n)
	}
	rs := ck.span(t, "request tel.cc")
	if got := attr(rs, "natssend.claimcheck.size").AsInt64(); got != big {
		t.Errorf("claimcheck.size %d, want %d", got, big)
	}
	parentOf(t, ck.span(t, "claimcheck_store tel.cc"), rs, false)
	hs := hk.span(t, "process tel.cc")
	parentOf(t, hs, rs, true)
	parentOf(t, hk.span(t, "claimcheck_resolve tel.cc"), hs, false)
	if got, _ := ck.counterValue(t, "natssend.claimcheck.stored.size"); got != big {
		t.Errorf("claim check bytes %d, want %d", got, big)
	}
	if len(rs.Events()) != 1 || rs.Events()[0].Name != "attempt" {
		t.Errorf("events %v, want one attempt", rs.Events())
	}
}

func TestTelemetryStream(t *testing.T) {
	s := natstest.Start(t, natstest.MaxPayload(64<<10))
	ck, hk := newOtelKit(t), newOtelKit(t)
	body := make([]byte, 300<<10)
	serveStream(t, s.URL(), "tel.stream", writeAll(body, 10_000), shim.Telemetry(telemetry.WithTracerProvider(hk.tp), telemetry.WithPropagators(hk.prop)))
	c := shim.NewClient(connect(t, s.URL()), shim.WithTelemetry(telemetry.WithTracerProvider(ck.tp), telemetry.WithPropagators(ck.prop)))
	rs, err := c.RequestStream(context.Background(), "tel.stream", []byte("all"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, rs)
	if err != nil || len(got) != len(body) {
		t.Fatalf("read %d bytes: %v", len(got), err)
	}
	cs := ck.span(t, "request_stream tel.stream")
	kindIs(t, cs, trace.SpanKindClient)
	checkAttrs(t, cs, map[string]string{"natssend.outcome": "ok", "messaging.operation.name": "request_stream"})
	// The Client span lasts until the end frame was read.
	if n := attr(cs, "natssend.stream.bytes").AsInt64(); n != int64(len(body)) {
		t.Errorf("caller's stream bytes %d, want %d", n, len(body))
	}
	hs := hk.span(t, "process tel.stream")
	kindIs(t, hs, trace.SpanKindServer)
	parentOf(t, hs, cs, true)
	if n := attr(hs, "natssend.stream.bytes").AsInt64(); n != int64(len(body)) {
		t.Errorf("stream bytes %d, want %d", n, len(body))
	}
	// Closed before its end: the caller gave up, the outcome is unknown.
	serveStream(t, s.URL(), "tel.stream2", writeAll(make([]byte, 300<<10), 10_000))
	c2 := shim.NewClient(connect(t, s.URL()), shim.WithTelemetry(telemetry.WithTracerProvider(ck.tp), telemetry.WithPropagators(ck.prop)))
	rs2, err := c2.RequestMsgStream(context.Background(), &nats.Msg{Subject: "tel.stream2", Data: []byte("again")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs2.Read(make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	_ = rs2.Close()
	spans := ck.rec.Ended()
	last := spans[len(spans)-1]
	if last.Name() != "request_stream tel.stream2" {
		t.Fatalf("last span %q", last.Name())
	}
	checkAttrs(t, last, map[string]string{"natssend.outcome": "unknown", "natssend.error.code": shim.CodeCanceled})
	// No responders: not run.
	if _, err := c.RequestStream(context.Background(), "tel.stream.none", nil); shim.Classify(err) != shim.OutcomeNotRun {
		t.Fatalf("no responders: %v", err)
	}
	checkAttrs(t, ck.span(t, "request_stream tel.stream.none"), map[string]string{"natssend.outcome": "not_run"})
}

func TestTelemetryRequestMany(t *testing.T) {
	s := natstest.Start(t)
	ck, hk := newOtelKit(t), newOtelKit(t)
	for range 3 {
		serve(t, s, "tel.many", shim.Handler(func(ctx context.Context, req *nats.Msg) ([]byte, error) { return []byte("r"), nil },
			shim.Telemetry(telemetry.WithTracerProvider(hk.tp), telemetry.WithPropagators(hk.prop))))
	}
	c := shim.NewClient(connect(t, s.URL()), shim.WithTelemetry(telemetry.WithTracerProvider(ck.tp), telemetry.WithPropagators(ck.prop)))
	n := 0
	for _, err := range c.RequestMany(context.Background(), "tel.many", nil, shim.Timeout(2*time.Second), shim.MaxReplies(3)) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 3 {
		t.Fatalf("%d replies", n)
	}
	ms := ck.span(t, "request_many tel.many")
	checkAttrs(t, ms, map[string]string{"natssend.outcome": "ok"})
	if got := attr(ms, "natssend.replies").AsInt64(); got != 3 {
		t.Errorf("replies %d", got)
	}
	natstest.Eventually(t, 10*time.Second, func() bool { return len(hk.spans("process tel.many")) == 3 }, "3 handler spans")
	for _, hs := range hk.spans("process tel.many") {
		parentOf(t, hs, ms, true)
	}
}
