package shim_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
	"github.com/natssend/natssend/telemetry"
)

// docRow is one row of docs/telemetry.md's table of spans and metrics.
type docRow struct {
	key    string            // "publish/producer" for a span, the name for a metric
	kind   string            // the span kind, or counter or histogram
	unit   string            // a metric's
	always map[string]string // attribute -> its documented value ("" for any)
	when   map[string]string
	seen   int
}

var (
	docNameRE = regexp.MustCompile("^`([^`]+)`$")
	docAttrRE = regexp.MustCompile("`([a-z_]+(?:\\.[a-z_]+)+)`(?: \\(`([^`]+)`\\))?")
)

// docTable parses the table of docs/telemetry.md.
func docTable(t *testing.T) map[string]*docRow {
	t.Helper()
	b, err := os.ReadFile("../docs/telemetry.md")
	if err != nil {
		t.Fatal(err)
	}
	attrs := func(cell string) map[string]string {
		m := map[string]string{}
		for _, a := range docAttrRE.FindAllStringSubmatch(cell, -1) {
			m[a[1]] = a[2]
		}
		return m
	}
	rows := map[string]*docRow{}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "| span |") && !strings.HasPrefix(line, "| metric |") {
			continue
		}
		// | signal | name | kind | unit | attributes | attributes when they apply |
		f := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|"), "|")
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		name := docNameRE.FindStringSubmatch(f[1])
		if len(f) != 6 || name == nil {
			t.Fatalf("docs/telemetry.md: a table row this test cannot read: %s", line)
		}
		f = append([]string{"", f[0], name[1], f[2], strings.Trim(f[3], "`")}, f[4:]...)
		r := &docRow{key: f[2], kind: f[3], unit: f[4], always: attrs(f[5]), when: attrs(f[6])}
		if f[1] == "span" {
			op, dest, ok := strings.Cut(f[2], " ")
			if !ok || dest != "{destination}" {
				t.Fatalf("docs/telemetry.md: span name %q is not {operation} {destination}", f[2])
			}
			r.key = op + "/" + f[3]
		}
		if rows[r.key] != nil {
			t.Fatalf("docs/telemetry.md: two rows for %s", r.key)
		}
		rows[r.key] = r
	}
	if len(rows) == 0 {
		t.Fatal("docs/telemetry.md: no table")
	}
	return rows
}

// check compares one recorded span or metric point with its row and
// returns what differs.
func (r *docRow) check(what string, kvs []attribute.KeyValue, whenSeen map[string]bool) []string {
	r.seen++
	var bad []string
	got := map[string]attribute.Value{}
	for _, kv := range kvs {
		got[string(kv.Key)] = kv.Value
	}
	for k, v := range r.always {
		g, ok := got[k]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("%s: no %s, which the table lists on every one", what, k))
		case v != "" && g.String() != v:
			bad = append(bad, fmt.Sprintf("%s: %s=%q, the table says %q", what, k, g.String(), v))
		}
	}
	for k := range got {
		if _, ok := r.always[k]; ok {
			continue
		}
		if _, ok := r.when[k]; !ok {
			bad = append(bad, fmt.Sprintf("%s: attribute %s is not in the table", what, k))
			continue
		}
		whenSeen[r.key+" "+k] = true
		whenSeen["* "+k] = true
	}
	return bad
}

// docProblems compares what was recorded with the table's rows.
func docProblems(table func() map[string]*docRow, spans []sdktrace.ReadOnlySpan, rm metricdata.ResourceMetrics) []string {
	rows := table()
	var bad []string
	whenSeen := map[string]bool{}
	for _, sp := range spans {
		key := sp.Name()[:strings.IndexByte(sp.Name()+" ", ' ')] + "/" + sp.SpanKind().String()
		r := rows[key]
		if r == nil {
			bad = append(bad, fmt.Sprintf("span %q (%s) has no row in docs/telemetry.md", sp.Name(), sp.SpanKind()))
			continue
		}
		bad = append(bad, r.check("span "+sp.Name(), sp.Attributes(), whenSeen)...)
	}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != "github.com/natssend/natssend" {
			continue
		}
		for _, m := range sm.Metrics {
			r := rows[m.Name]
			if r == nil {
				bad = append(bad, fmt.Sprintf("metric %s has no row in docs/telemetry.md", m.Name))
				continue
			}
			kind, sets, _ := metricPoints(m)
			if kind != r.kind || m.Unit != r.unit {
				bad = append(bad, fmt.Sprintf("metric %s: %s in %q, the table says %s in %q", m.Name, kind, m.Unit, r.kind, r.unit))
			}
			for _, set := range sets {
				bad = append(bad, r.check("metric "+m.Name, set.ToSlice(), whenSeen)...)
			}
		}
	}
	for _, r := range rows {
		if r.seen == 0 {
			bad = append(bad, fmt.Sprintf("docs/telemetry.md lists %s, which was not recorded", r.key))
			continue
		}
		for a := range r.when {
			key := r.key + " " + a
			if a == "messaging.destination.template" || a == "messaging.destination.temporary" {
				key = "* " + a // a temporary destination on some of them shows the rule
			}
			if !whenSeen[key] {
				bad = append(bad, fmt.Sprintf("docs/telemetry.md lists %s on %s, which was never recorded", a, r.key))
			}
		}
	}
	slices.Sort(bad)
	return slices.Compact(bad)
}

// TestTelemetryDocTable records every kind of operation natssend has with
// the SDK's in-memory exporters (a span recorder, a manual metric reader)
// and checks docs/telemetry.md's table against them: every span and
// metric recorded has its row, with its kind and unit, every attribute it
// carries is listed, those listed as always there are, and every row and
// every attribute the table lists is recorded at least once.
func TestTelemetryDocTable(t *testing.T) {
	docTable(t) // readable before anything runs
	k := useGlobalKit(t)
	const limit = 16 << 10
	s := natstest.Start(t, natstest.MaxPayload(limit), natstest.JetStream())
	big := make([]byte, 2*limit)
	ctx, parent := k.tp.Tracer("test").Start(context.Background(), "parent")
	defer parent.End()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	// A responder in a queue group, with claim checks both ways.
	hnc := connect(t, s.URL())
	_, err := hnc.QueueSubscribe("doc.req", "workers", shim.Handler(func(ctx context.Context, req *nats.Msg) ([]byte, error) {
		switch {
		case len(req.Data) == len(big):
			return big, nil
		case string(req.Data) == "fail":
			return nil, shim.InvalidArgument("no")
		}
		return []byte("ok"), nil
	}, shim.Conn(hnc), shim.ServeClaimChecks(jsStore(t, hnc))))
	must(err)
	must(hnc.Flush())
	// A handler on an inbox: a temporary destination.
	inbox := hnc.NewInbox()
	serve(t, s, inbox, shim.Handler(func(ctx context.Context, req *nats.Msg) ([]byte, error) { return nil, nil }))
	serveStream(t, s.URL(), "doc.stream", writeAll([]byte("streamed"), 3), shim.ServeClaimChecks(jsStore(t, hnc)))

	cnc := connect(t, s.URL())
	store := jsStore(t, cnc)
	c := shim.NewClient(cnc, shim.WithClaimChecks(store), shim.WithTimeout(30*time.Second))
	for _, data := range [][]byte{[]byte("x"), big} {
		_, err := c.Request(ctx, "doc.req", data)
		must(err)
	}
	_, err = c.Request(ctx, "doc.req", []byte("x"), shim.Attempts(2))
	must(err)
	if _, err := c.Request(ctx, "doc.req", []byte("fail")); shim.Classify(err) != shim.OutcomeRejected {
		t.Fatalf("a failing handler: %v", err)
	}
	if _, err := c.Request(ctx, "doc.none", nil); shim.Classify(err) != shim.OutcomeNotRun {
		t.Fatalf("no responders: %v", err)
	}
	_, err = c.Request(ctx, inbox, nil)
	must(err)
	for _, err := range c.RequestMany(ctx, "doc.req", []byte("x"), shim.MaxReplies(1)) {
		must(err)
	}
	for _, data := range [][]byte{nil, big} {
		rs, err := c.RequestStream(ctx, "doc.stream", data)
		must(err)
		_, err = readAll(t, rs)
		must(err)
	}
	// Failures: nobody listens.
	if _, err := c.RequestStream(ctx, "doc.none", nil); shim.Classify(err) != shim.OutcomeNotRun {
		t.Fatalf("a stream without responders: %v", err)
	}
	for _, err := range c.RequestMany(ctx, "doc.none", nil) {
		if shim.Classify(err) != shim.OutcomeNotRun {
			t.Fatalf("a scatter-gather without responders: %v", err)
		}
	}
	// A propagator fault: the request goes without its trace context.
	_, err = shim.NewClient(cnc, shim.WithTelemetry(telemetry.WithPropagators(panicky{"panic"}))).Request(ctx, "doc.req", []byte("x"))
	must(err)

	// A request refused: too large for a Client without claim checks.
	if _, err := shim.NewClient(cnc).Request(ctx, "doc.req", big); shim.Classify(err) != shim.OutcomeNotRun {
		t.Fatalf("an oversized request: %v", err)
	}

	// Publishes: with a reply subject, to an inbox.
	pnc := connect(t, s.URL())
	must(shim.PublishMsgContext(ctx, pnc, &nats.Msg{Subject: "doc.pub", Reply: "doc.answers", Data: []byte("x")}))
	must(shim.PublishContext(ctx, pnc, pnc.NewInbox(), []byte("x")))
	// Claim-checked publishes: to a subscription helper, to a stream.
	got := make(chan *nats.Msg, 1)
	sub, err := store.Subscribe("doc.cc", func(m *nats.Msg) { got <- m }, func(m *nats.Msg, err error) { t.Error(err) })
	must(err)
	defer func() { _ = sub.Unsubscribe() }()
	must(cnc.Flush())
	must(store.PublishMsg(ctx, &nats.Msg{Subject: "doc.cc", Data: big}))
	select {
	case <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the claim-checked message was not delivered")
	}
	js, err := jetstream.New(cnc)
	must(err)
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: "DOC", Subjects: []string{"doc.js"}, Storage: jetstream.MemoryStorage})
	must(err)
	_, err = store.PublishJetStream(ctx, &nats.Msg{Subject: "doc.js", Data: big})
	must(err)
	// Refused by a Store whose objects are smaller than the body.
	tiny, err := claimcheck.New(ctx, js, claimcheck.WithStorage(jetstream.MemoryStorage), claimcheck.WithMaxObjectSize(limit))
	must(err)
	if _, err := tiny.PublishJetStream(ctx, &nats.Msg{Subject: "doc.js", Data: big}); !errors.Is(err, claimcheck.ErrTooLarge) {
		t.Fatalf("a JetStream publish above the Store's object size: %v", err)
	}
	if err := tiny.PublishMsg(ctx, &nats.Msg{Subject: "doc.cc", Data: big}); !errors.Is(err, claimcheck.ErrTooLarge) {
		t.Fatalf("a publish above the Store's object size: %v", err)
	}

	// A call whose clean-up cannot finish: the caller's purges are lost
	// (after its Store's permission probe), so the payloads it stored and
	// read are reported (natssend.claimcheck.cleanup.failures).
	p := s.Proxy(t)
	p.On(natstest.Rule{Dir: natstest.ToServer, Op: "PUB", Subject: "$JS.API.STREAM.PURGE.>", Nth: 2, Every: true, Action: natstest.Drop})
	lossy := connect(t, p.URL())
	ljs, err := jetstream.New(lossy)
	must(err)
	lst, err := claimcheck.New(ctx, ljs, claimcheck.WithStorage(jetstream.MemoryStorage), claimcheck.WithCleanupTimeout(time.Second))
	must(err)
	if _, err := shim.NewClient(lossy, shim.WithClaimChecks(lst)).Request(ctx, "doc.req", big); err != nil {
		t.Fatalf("a call whose clean-up fails: %v", err)
	}

	// The handlers' spans end after their replies: wait until what was
	// recorded matches the table (or stops changing towards it).
	var bad []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var rm metricdata.ResourceMetrics
		must(k.reader.Collect(context.Background(), &rm))
		bad = docProblems(func() map[string]*docRow { return docTable(t) }, natssendSpans(k), rm)
		if len(bad) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, p := range bad {
		t.Error(p)
	}
}

// natssendSpans are the ended spans natssend made.
func natssendSpans(k *otelKit) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range k.rec.Ended() {
		if s.InstrumentationScope().Name == "github.com/natssend/natssend" {
			out = append(out, s)
		}
	}
	return out
}

// metricPoints is a metric's instrument kind, its points' attributes and
// their total: the sum of a counter's values, the count of a histogram's
// measurements.
func metricPoints(m metricdata.Metrics) (kind string, sets []attribute.Set, total int64) {
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			sets, total = append(sets, p.Attributes), total+p.Value
		}
		return "counter", sets, total
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			sets, total = append(sets, p.Attributes), total+int64(p.Count)
		}
		return "histogram", sets, total
	case metricdata.Histogram[int64]:
		for _, p := range d.DataPoints {
			sets, total = append(sets, p.Attributes), total+int64(p.Count)
		}
		return "histogram", sets, total
	}
	return "other", nil, 0
}
