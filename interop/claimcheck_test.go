package interop_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
)

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// jsResult is what peer.mjs's resolve scenario reports per claim check.
type jsResult struct {
	Subject, Expect, Sha256, Error, Message string
	Size                                    int
	Deleted                                 bool
}

// TestJSResolvesGoClaimChecks: nats.js reads what a Go Store publishes:
// on core NATS from the Store's bucket and another bucket, from a
// JetStream stream, on a queue group with DeleteAfterRead (the object is
// gone afterwards, for Go too), and refuses a reference published on
// another subject than its object is bound to and one whose size header
// was altered, as the spec says.
func TestJSResolvesGoClaimChecks(t *testing.T) {
	requireInterop(t)
	s, nc, js := server(t)
	ctx := ctxT(t, 2*time.Minute)
	st := store(t, js)
	other := store(t, js, claimcheck.WithBucket("other_bucket"))
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "CCJS", Subjects: []string{"ccjs.>"}, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	results := make(chan jsResult, 16)
	sub, err := nc.Subscribe("interop.results", func(m *nats.Msg) { //natssend:reviewed the peer's JSON reports, never claim checks
		var r jsResult
		if err := json.Unmarshal(m.Data, &r); err != nil {
			t.Errorf("result %q: %v", m.Data, err)
		}
		results <- r
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	p := runPeer(t, "resolve", s.URL())

	msg := func(subject string, n, seed int) *nats.Msg {
		data := pattern(n, seed)
		return &nats.Msg{Subject: subject, Data: data, Header: nats.Header{"Interop-Sha256": {sum(data)}}}
	}
	if err := st.PublishMsg(ctx, msg("cc.core.own", 200_000, 1)); err != nil {
		t.Fatal(err)
	}
	if err := other.PublishMsg(ctx, msg("cc.core.other", 300_001, 2)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.PublishJetStream(ctx, msg("ccjs.orders", 150_000, 3)); err != nil {
		t.Fatal(err)
	}
	work, err := st.Prepare(ctx, msg("cc.work.q", 100_000, 4), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.PublishMsg(work); err != nil { //natssend:reviewed a claim check's reference, prepared to keep it for the check below
		t.Fatal(err)
	}
	bound, err := st.Prepare(ctx, msg("cc.core.bound", 100_000, 5), 0)
	if err != nil {
		t.Fatal(err)
	}
	bound.Subject = "cc.core.elsewhere"
	if err := nc.PublishMsg(bound); err != nil { //natssend:reviewed a reference on another subject than its object's: the reader must refuse it
		t.Fatal(err)
	}
	sized, err := st.Prepare(ctx, msg("cc.core.sized", 100_000, 6), 0)
	if err != nil {
		t.Fatal(err)
	}
	sized.Header.Set(claimcheck.HeaderSize, strconv.Itoa(100_001))
	if err := nc.PublishMsg(sized); err != nil { //natssend:reviewed an altered size header: the reader must refuse it
		t.Fatal(err)
	}

	got := map[string]jsResult{}
	for len(got) < 6 {
		select {
		case r := <-results:
			got[r.Subject] = r
		case <-ctx.Done():
			t.Fatalf("results so far: %+v", got)
		}
	}
	for _, subj := range []string{"cc.core.own", "cc.core.other", "ccjs.orders", "cc.work.q"} {
		if r := got[subj]; r.Error != "" || r.Sha256 != r.Expect {
			t.Errorf("%s: nats.js read %d bytes (%s), want %s: %s %s", subj, r.Size, r.Sha256, r.Expect, r.Error, r.Message)
		}
	}
	if r := got["cc.work.q"]; !r.Deleted {
		t.Errorf("cc.work.q: not deleted after read: %+v", r)
	}
	if _, err := st.Resolve(ctx, work); !errors.Is(err, claimcheck.ErrMissing) {
		t.Errorf("after nats.js's DeleteAfterRead, Go's Resolve: %v, want ErrMissing", err)
	}
	if r := got["cc.core.elsewhere"]; r.Error != "DATA_LOSS" {
		t.Errorf("a reference on another subject: %+v, want DATA_LOSS (subject binding)", r)
	}
	if r := got["cc.core.sized"]; r.Error != "DATA_LOSS" {
		t.Errorf("an altered size: %+v, want DATA_LOSS", r)
	}
	if err := nc.Publish("interop.done", nil); err != nil { //natssend:reviewed test control message
		t.Fatal(err)
	}
	p.wait(nil)
}

// TestGoResolvesJSClaimChecks: a Go Store reads claim checks nats.js
// wrote with its object store's own API at its own chunk size (65,536 on
// this 64 KiB server) and the binding the spec gives, in the Store's own
// bucket and another, on core NATS and through a JetStream stream,
// including one byte and an empty payload.
func TestGoResolvesJSClaimChecks(t *testing.T) {
	requireInterop(t)
	s, nc, js := server(t)
	ctx := ctxT(t, 2*time.Minute)
	st := store(t, js)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "JS2GO", Subjects: []string{"js2go.js"}, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	core := make(chan *nats.Msg, 16)
	sub, err := nc.ChanSubscribe("js2go.core", core)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	p := runPeer(t, "write", s.URL())
	var res struct {
		Sent []struct{ Subject, Bucket string }
	}
	p.wait(&res)
	check := func(m *nats.Msg) {
		t.Helper()
		got, err := st.Resolve(ctx, m)
		if err != nil {
			t.Fatalf("%s (bucket %s): %v", m.Subject, m.Header.Get(claimcheck.HeaderBucket), err)
		}
		if want := m.Header.Get("Interop-Sha256"); sum(got) != want {
			t.Fatalf("%s: %d bytes, digest %s, want %s", m.Subject, len(got), sum(got), want)
		}
	}
	for range len(res.Sent) - 1 {
		select {
		case m := <-core:
			check(m)
		case <-ctx.Done():
			t.Fatal("nats.js's claim checks did not arrive")
		}
	}
	cons, err := js.OrderedConsumer(ctx, "JS2GO", jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	jm, err := cons.Next(jetstream.FetchMaxWait(30 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	check(&nats.Msg{Subject: jm.Subject(), Header: jm.Headers(), Data: jm.Data()})
}
