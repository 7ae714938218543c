package claimcheck_test

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
)

// TestNilStoreRefuses: a nil *Store (a New whose error was ignored)
// refuses every publish with an error that matches ErrNotPublished and
// nats.ErrInvalidArg, and never panics.
func TestNilStoreRefuses(t *testing.T) {
	t.Parallel()
	var s *claimcheck.Store
	ctx := ctxT(t)
	m := &nats.Msg{Subject: "ev.x", Data: []byte("x")}
	_, jsErr := s.PublishJetStream(ctx, m)
	_, prepErr := s.Prepare(ctx, m, 0)
	for name, err := range map[string]error{
		"PublishMsg":       s.PublishMsg(ctx, m),
		"PublishJetStream": jsErr,
		"Prepare":          prepErr,
	} {
		if !errors.Is(err, claimcheck.ErrNotPublished) || !errors.Is(err, nats.ErrInvalidArg) {
			t.Errorf("%s on a nil Store: %v", name, err)
		}
	}
	if s.Close() != nil || s.Bucket() != "" || s.ObjectStore() != nil {
		t.Error("Close, Bucket and ObjectStore of a nil Store")
	}
}
