package shim_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// callerExceptSecret is a user allowed every inbox but one subtree, a
// common shape of a narrow grant.
const callerExceptSecret = `{ user: "caller", password: "p", permissions: { subscribe: { allow: ["_INBOX.>"], deny: ["_INBOX.secret.>"] } } }`

// waitRefusal makes a subscription to subject on nc, which the server
// refuses, and waits until the refusal has been reported to every watch.
func waitRefusal(t *testing.T, nc *nats.Conn, subject string) {
	t.Helper()
	got := make(chan struct{}, 1)
	stop := connlimit.For(nc).Listen(func(d *connlimit.Denial) {
		if d.Op == "subscribe" && d.Subject == subject {
			select {
			case got <- struct{}{}:
			default:
			}
		}
	})
	defer stop()
	if _, err := nc.Subscribe(subject, func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatalf("the refusal of %q was not reported", subject)
	}
}

// TestRefusalIsolated is the scenario: a caller allowed every
// inbox but one subtree has one subscription of its own refused (in that
// subtree) while 8 requests and a stream are in flight. The refusal
// concerns none of them: every request gets its reply, the stream goes
// on, and every later Request, Attempts, RequestMany, RequestStream and
// the Store's Prepare, Resolve and PublishMsg on the connection succeed.
func TestRefusalIsolated(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	s := natstest.Start(t, natstest.JetStream(), natstest.MaxPayload(limit), natstest.WithUserConfig("caller", "p", callerExceptSecret))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	release := make(chan struct{})
	var arrived atomic.Int64
	srv := connect(t, s.URL())
	slow := shim.Handler(func(ctx context.Context, m *nats.Msg) ([]byte, error) {
		arrived.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return append([]byte("re:"), m.Data...), nil
	})
	// Each request on a goroutine of its own: all 8 wait at once.
	if _, err := srv.Subscribe("svc.slow", func(m *nats.Msg) { go slow(m) }); err != nil {
		t.Fatal(err)
	}
	if _, err := shim.Serve(srv, "svc.stream", shim.Stream(func(ctx context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		if _, err := w.Write([]byte("one;")); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		_, err := w.Write([]byte("two"))
		return err
	})); err != nil {
		t.Fatal(err)
	}
	if err := srv.Flush(); err != nil {
		t.Fatal(err)
	}
	nc := connect(t, s.UserURL("caller"))
	c := shim.NewClient(nc, shim.WithTimeout(30*time.Second))

	// 8 requests in flight: 6 single, 2 with attempts.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var opts []shim.CallOption
			if i >= 6 {
				opts = []shim.CallOption{shim.Attempts(2), shim.OperationID("iso-" + string(rune('a'+i))), shim.AttemptTimeout(20 * time.Second)}
			}
			r, err := c.Request(ctx, "svc.slow", []byte{byte('0' + i)}, opts...)
			if err == nil && string(r.Data) != "re:"+string(rune('0'+i)) {
				err = errors.New("wrong reply " + string(r.Data))
			}
			errs[i] = err
		}()
	}
	rs, err := c.RequestStream(ctx, "svc.stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	first := make([]byte, 4)
	if _, err := io.ReadFull(rs, first); err != nil || string(first) != "one;" {
		t.Fatalf("the stream's first frame: %q, %v", first, err)
	}
	for wait := time.Now().Add(20 * time.Second); arrived.Load() < 8; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(wait) {
			t.Fatalf("%d of 8 requests reached the responder", arrived.Load())
		}
	}

	waitRefusal(t, nc, "_INBOX.secret.x")
	close(release)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("in-flight request %d, answered: %v", i, err)
		}
	}
	rest, err := io.ReadAll(rs)
	if err != nil || string(rest) != "two" {
		t.Errorf("the running stream: %q, %v", rest, err)
	}

	// Later calls on the connection.
	if r, err := c.Request(ctx, "svc.slow", []byte("L")); err != nil || string(r.Data) != "re:L" {
		t.Errorf("a later Request: %v", err)
	}
	if _, err := c.Request(ctx, "svc.slow", []byte("A"), shim.Attempts(2), shim.OperationID("iso-later")); err != nil {
		t.Errorf("a later Request with Attempts: %v", err)
	}
	for _, err := range c.RequestMany(ctx, "svc.slow", []byte("M"), shim.MaxReplies(1)) {
		if err != nil {
			t.Errorf("a later RequestMany: %v", err)
		}
	}
	if rs, err := c.RequestStream(ctx, "svc.stream", nil); err != nil {
		t.Errorf("a later RequestStream: %v", err)
	} else if b, err := io.ReadAll(rs); err != nil || string(b) != "one;two" {
		t.Errorf("a later stream: %q, %v", b, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := claimcheck.New(ctx, js, claimcheck.WithBucket("iso"))
	if err != nil {
		t.Fatalf("a later claimcheck.New: %v", err)
	}
	big := bytes.Repeat([]byte("x"), 3*limit)
	ref, err := st.Prepare(ctx, &nats.Msg{Subject: "ev.iso", Data: big}, 0)
	if err != nil {
		t.Fatalf("a later Prepare: %v", err)
	}
	if data, err := st.Resolve(ctx, ref); err != nil || !bytes.Equal(data, big) {
		t.Errorf("a later Resolve: %d bytes, %v", len(data), err)
	}
	if err := st.PublishMsg(ctx, &nats.Msg{Subject: "ev.iso", Data: big}); err != nil {
		t.Errorf("a later PublishMsg: %v", err)
	}
}
