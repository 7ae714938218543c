package shim_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// TestHugeTimeoutReachesResponder: WithTimeout accepts any positive
// duration, and the "no timeout" idiom time.Duration(math.MaxInt64) must
// reach the responder as that, not as 1 ms (rounding up to whole
// milliseconds must not overflow) nor as a deadline already past (a
// HeaderTimeout above what a time.Duration holds).
func TestHugeTimeoutReachesResponder(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	rnc := connect(t, s.URL())
	if _, err := rnc.Subscribe("svc", shim.Handler(func(ctx context.Context, m *nats.Msg) ([]byte, error) {
		time.Sleep(20 * time.Millisecond) // longer than a 1 ms timeout would allow
		if err := ctx.Err(); err != nil {
			return nil, shim.Reject("CTX", "handler context already done: "+err.Error()+" header "+m.Header.Get(shim.HeaderTimeout))
		}
		return []byte("ok"), nil
	}, shim.Conn(rnc))); err != nil {
		t.Fatal(err)
	}
	_ = rnc.Flush()
	nc := connect(t, s.URL())
	for _, tc := range []struct {
		name string
		c    *shim.Client
		opts []shim.CallOption
	}{
		{"WithTimeout(MaxInt64)", shim.NewClient(nc, shim.WithTimeout(math.MaxInt64)), nil},
		{"Timeout(MaxInt64)+Attempts", shim.NewClient(nc, shim.WithTimeout(math.MaxInt64)), []shim.CallOption{shim.Attempts(2)}},
	} {
		reply, err := tc.c.Request(context.Background(), "svc", []byte("q"), tc.opts...)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		t.Logf("%s: %q", tc.name, reply.Data)
	}
}
