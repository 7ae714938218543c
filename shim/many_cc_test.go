package shim_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/shim"
)

// TestManyRepliesNotClaimChecked: a Client with WithClaimChecks does not
// announce HeaderAcceptClaimCheck on RequestMany's request, so a responder
// with ServeClaimChecks answers an oversized reply with PAYLOAD_TOO_LARGE
// (an error, never the reference as if it were the reply) and stores
// nothing; a reply that fits is yielded as it is.
func TestManyRepliesNotClaimChecked(t *testing.T) {
	t.Parallel()
	e := newOverflowEnv(t)
	big := payload(2*overflowLimit, 3)
	e.serveHandler(t, shim.Handler(func(_ context.Context, m *nats.Msg) ([]byte, error) {
		if m.Header.Get(shim.HeaderAcceptClaimCheck) != "" {
			return nil, shim.Reject("ACCEPT", "the request announced claim-checked replies")
		}
		if string(m.Data) == "small" {
			return []byte("ok"), nil
		}
		return big, nil
	}, shim.ServeClaimChecks(e.rst), shim.Conn(e.rnc)))
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst), shim.WithTimeout(5*time.Second))
	for m, err := range c.RequestMany(context.Background(), "svc", []byte("big"), shim.MaxReplies(1)) {
		if m != nil && claimcheck.IsClaimCheck(m) {
			t.Fatalf("the claim-check reference yielded as the reply: %v", m.Header)
		}
		if !errors.Is(err, shim.ErrReplyTooLarge) {
			t.Fatalf("oversized reply: %v, %v; want PAYLOAD_TOO_LARGE", m, err)
		}
	}
	for m, err := range c.RequestMany(context.Background(), "svc", []byte("small"), shim.MaxReplies(1)) {
		if err != nil || string(m.Data) != "ok" {
			t.Fatalf("small reply: %v, %v", m, err)
		}
	}
	if n := e.stored(t); n != 0 {
		t.Errorf("%d messages stored", n)
	}
}
