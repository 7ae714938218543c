package shim_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
	"github.com/natssend/natssend/telemetry"
)

// spanNames is a span processor that keeps the distinct names of ended
// spans (not the spans: there are tens of thousands).
type spanNames struct {
	mu    sync.Mutex
	names map[string]int
}

func (p *spanNames) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (p *spanNames) OnEnd(s sdktrace.ReadOnlySpan) {
	p.mu.Lock()
	p.names[s.Name()]++
	p.mu.Unlock()
}
func (p *spanNames) Shutdown(context.Context) error   { return nil }
func (p *spanNames) ForceFlush(context.Context) error { return nil }

// cardKit is an SDK side for the cardinality test.
type cardKit struct {
	names  *spanNames
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newCardKit(t *testing.T) *cardKit {
	k := &cardKit{names: &spanNames{names: map[string]int{}}, reader: sdkmetric.NewManualReader()}
	k.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(k.names))
	k.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(k.reader))
	t.Cleanup(func() { _ = k.tp.Shutdown(context.Background()); _ = k.mp.Shutdown(context.Background()) })
	return k
}

// series returns, per metric, its data points' attribute sets and the
// sum of its counters' values (points for histograms).
func (k *cardKit) series(t *testing.T) (map[string][]attribute.Set, map[string]int64) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := k.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	sets, sums := map[string][]attribute.Set{}, map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			_, ss, total := metricPoints(m)
			sets[m.Name], sums[m.Name] = append(sets[m.Name], ss...), sums[m.Name]+total
		}
	}
	return sets, sums
}

// TestMetricCardinalityBoundedOverManyRequests: 10,000 requests, some of
// them claim-checked both ways (the reply stored under the caller's
// unique inbox), some with attempts, give a handful of series per metric
// and of span names on both sides; no inbox is ever an attribute value
// of a metric or part of a span name.
func TestMetricCardinalityBoundedOverManyRequests(t *testing.T) {
	const (
		total   = 10_000
		claimed = 200 // claim-checked both ways
		limit   = 16 << 10
		workers = 8
		handful = 4
	)
	s := natstest.Start(t, natstest.MaxPayload(limit), natstest.JetStream())
	ck, hk := newCardKit(t), newCardKit(t)
	prop := propagation.TraceContext{}
	store := func(nc *nats.Conn, k *cardKit) *claimcheck.Store {
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		st, err := claimcheck.New(context.Background(), js, claimcheck.WithStorage(jetstream.MemoryStorage),
			claimcheck.WithTelemetry(telemetry.WithTracerProvider(k.tp), telemetry.WithMeterProvider(k.mp), telemetry.WithPropagators(prop)))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	big := make([]byte, 2*limit)
	hnc := connect(t, s.URL(), nats.CustomInboxPrefix("svc.replies")) // the responder's own prefix is not the caller's
	if _, err := hnc.Subscribe("card.req", shim.Handler(func(ctx context.Context, req *nats.Msg) ([]byte, error) {
		if len(req.Data) == len(big) {
			return big, nil // claim-checked to the caller's inbox
		}
		return []byte("ok"), nil
	}, shim.Conn(hnc), shim.ServeClaimChecks(store(hnc, hk)), shim.Telemetry(telemetry.WithTracerProvider(hk.tp), telemetry.WithMeterProvider(hk.mp), telemetry.WithPropagators(prop)))); err != nil {
		t.Fatal(err)
	}
	if err := hnc.Flush(); err != nil {
		t.Fatal(err)
	}
	// The caller: a custom inbox prefix too, which the responder learns
	// from nothing but the subjects.
	cnc := connect(t, s.URL(), nats.CustomInboxPrefix("app.in"))
	c := shim.NewClient(cnc, shim.WithClaimChecks(store(cnc, ck)), shim.WithTelemetry(telemetry.WithTracerProvider(ck.tp), telemetry.WithMeterProvider(ck.mp)),
		shim.WithTelemetry(telemetry.WithPropagators(prop)), shim.WithTimeout(time.Minute))

	work := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				var err error
				var r *nats.Msg
				switch {
				case i < claimed:
					r, err = c.Request(context.Background(), "card.req", big)
					if err == nil && len(r.Data) != len(big) {
						t.Errorf("claim-checked reply of %d bytes", len(r.Data))
					}
				case i%2 == 0:
					r, err = c.Request(context.Background(), "card.req", []byte("x"), shim.Attempts(2))
				default:
					r, err = c.Request(context.Background(), "card.req", []byte("x"))
				}
				if err == nil && r == nil {
					t.Error("nil reply")
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range total {
		select {
		case work <- i:
		case err := <-errs:
			close(work)
			wg.Wait()
			t.Fatalf("request %d: %v", i, err)
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}

	// A handler records its consume once its reply is sent: the caller
	// can have the last reply a moment before the responder's last record.
	natstest.Eventually(t, 10*time.Second, func() bool {
		_, sums := hk.series(t)
		return sums["messaging.client.consumed.messages"] >= total
	}, "the responder's records of the last requests")
	for side, k := range map[string]*cardKit{"caller": ck, "responder": hk} {
		sets, sums := k.series(t)
		for name, ss := range sets {
			t.Logf("%s: %s: %d series", side, name, len(ss))
			if len(ss) > handful {
				t.Errorf("%s: %s has %d series, want at most %d: %v", side, name, len(ss), handful, ss[:handful+1])
			}
			for _, set := range ss {
				for _, kv := range set.ToSlice() {
					if v := kv.Value.String(); isInboxValue(v) {
						t.Errorf("%s: %s has %s=%q", side, name, kv.Key, v)
					}
				}
			}
		}
		k.names.mu.Lock()
		if len(k.names.names) > handful {
			t.Errorf("%s: %d span names, want at most %d", side, len(k.names.names), handful)
		}
		for n := range k.names.names {
			if isInboxValue(n) {
				t.Errorf("%s: span name %q", side, n)
				break
			}
		}
		k.names.mu.Unlock()
		// The metrics were recorded (the bound is not met by recording nothing).
		if side == "caller" {
			if sums["messaging.client.sent.messages"] != total {
				t.Errorf("caller: %d messages sent, want %d", sums["messaging.client.sent.messages"], total)
			}
		} else if sums["messaging.client.consumed.messages"] < total {
			t.Errorf("responder: %d messages consumed, want at least %d", sums["messaging.client.consumed.messages"], total)
		}
		if sums["natssend.claimcheck.stored"] != claimed {
			t.Errorf("%s: %d claim checks stored, want %d", side, sums["natssend.claimcheck.stored"], claimed)
		}
	}
	// The replies' claim checks: their inboxes under the caller's prefix,
	// named by its template and marked temporary.
	sets, _ := hk.series(t)
	want := attribute.NewSet(attribute.String("messaging.system", "nats"),
		attribute.String("messaging.destination.template", "app.in.>"), attribute.Bool("messaging.destination.temporary", true))
	if ss := sets["natssend.claimcheck.stored"]; len(ss) != 1 || !ss[0].Equals(&want) {
		t.Errorf("responder's claim checks: %d series (%v), want one with %v", len(ss), ss[:min(len(ss), 2)], want.ToSlice())
	}
}

// isInboxValue reports whether v holds an inbox's unique token (a nuid).
func isInboxValue(v string) bool {
	for _, tok := range strings.FieldsFunc(v, func(r rune) bool { return r == '.' || r == ' ' }) {
		if len(tok) == 22 && strings.Trim(tok, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") == "" {
			return true
		}
	}
	return false
}
