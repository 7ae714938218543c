package shim_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// TestClaimChecksAcrossAccountImport: a service exported by one account
// and imported by another. Plain calls work; what cannot cross is refused
// before the handler runs, saying so, and nothing is left stored:
//   - a claim-checked request: CLAIM_CHECK_UNRESOLVED naming the import
//     (the payload is in the caller's account), a rejection;
//   - a reply over the limit: PAYLOAD_TOO_LARGE from the responder, never
//     a claim check in the responder's account that the caller could not
//     read (REPLY_LOST);
//   - a stream: a rejection naming the import; the handler does not run.
func TestClaimChecksAcrossAccountImport(t *testing.T) {
	t.Parallel()
	const limit = 32 << 10
	s := natstest.Start(t, natstest.MaxPayload(limit), natstest.JetStream(),
		natstest.WithAccount(natstest.Account{Name: "SVC", User: "svc", Password: "p",
			Extra: `exports: [ { service: "svc.>" } ]`}),
		natstest.WithAccount(natstest.Account{Name: "CALLER", User: "caller", Password: "p",
			Extra: `imports: [ { service: { account: SVC, subject: "svc.>" } } ]`}))
	ctx := context.Background()
	store := func(nc *nats.Conn) (*claimcheck.Store, jetstream.Stream) {
		t.Helper()
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		st, err := claimcheck.New(ctx, js, claimcheck.WithStorage(jetstream.MemoryStorage))
		if err != nil {
			t.Fatal(err)
		}
		str, err := js.Stream(ctx, "OBJ_"+st.Bucket())
		if err != nil {
			t.Fatal(err)
		}
		return st, str
	}
	stored := func(str jetstream.Stream) uint64 {
		t.Helper()
		info, err := str.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Msgs
	}

	svc := connect(t, s.UserURL("svc"))
	svcStore, svcStream := store(svc)
	var ran atomic.Int64
	reply := bytes.Repeat([]byte("r"), 4*limit)
	serveOn := func(subject string, sv shim.Service) {
		t.Helper()
		if _, err := shim.Serve(svc, subject, sv); err != nil {
			t.Fatal(err)
		}
	}
	serveOn("svc.echo", shim.Unary(func(_ context.Context, m *nats.Msg) ([]byte, error) {
		ran.Add(1)
		return m.Data, nil
	}, shim.ServeClaimChecks(svcStore)))
	serveOn("svc.big", shim.Unary(func(context.Context, *nats.Msg) ([]byte, error) {
		ran.Add(1)
		return reply, nil
	}, shim.ServeClaimChecks(svcStore)))
	serveOn("svc.stream", shim.Stream(func(_ context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		ran.Add(1)
		_, err := w.Write(reply)
		return err
	}, shim.ServeClaimChecks(svcStore)))

	callerNC := connect(t, s.UserURL("caller"))
	callerStore, callerStream := store(callerNC)
	c := shim.NewClient(callerNC, shim.WithClaimChecks(callerStore), shim.WithTimeout(10*time.Second))

	if r, err := c.Request(ctx, "svc.echo", []byte("hi")); err != nil || string(r.Data) != "hi" {
		t.Fatalf("a plain call across the import: %v, %v", r, err)
	}
	ran.Store(0)

	t0 := time.Now()
	_, err := c.Request(ctx, "svc.echo", bytes.Repeat([]byte("q"), 4*limit))
	e := shim.Describe(err)
	if e == nil || !e.Remote || e.Code != shim.CodeClaimCheckUnresolved || shim.Classify(err) != shim.OutcomeRejected ||
		!strings.Contains(e.Message, "service import") {
		t.Errorf("claim-checked request: got %v, want a CLAIM_CHECK_UNRESOLVED rejection naming the service import", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("the refusal took %v", d)
	}

	_, err = c.Request(ctx, "svc.big", nil)
	if !errors.Is(err, shim.ErrReplyTooLarge) || errors.Is(err, shim.ErrReplyLost) {
		t.Errorf("reply over the limit: got %v, want a PAYLOAD_TOO_LARGE error reply, not REPLY_LOST", err)
	}
	if n := ran.Load(); n != 1 {
		t.Errorf("the handlers ran %d times, want 1 (only svc.big)", n)
	}

	rs, err := c.RequestStream(ctx, "svc.stream", nil)
	if rs != nil {
		_ = rs.Close()
	}
	e = shim.Describe(err)
	if e == nil || !e.Remote || shim.Classify(err) != shim.OutcomeRejected || !strings.Contains(e.Message, "account import") {
		t.Errorf("stream: got %v, want a rejection naming the account import", err)
	}
	if n := ran.Load(); n != 1 {
		t.Errorf("the stream handler ran (%d runs in all)", n)
	}

	// Nothing left in either account's bucket: the caller deleted its
	// request's payload when the call ended, the responder stored nothing.
	if n := stored(svcStream); n != 0 {
		t.Errorf("%d messages left in the responder's bucket", n)
	}
	for wait := time.Now().Add(10 * time.Second); stored(callerStream) != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(wait) {
			t.Fatalf("%d messages left in the caller's bucket", stored(callerStream))
		}
	}
}
