package shim_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// TestAttemptTimeoutErrorIdentity: every attempt's error that says
// DEADLINE_EXCEEDED keeps the
// nats.ErrTimeout / context.DeadlineExceeded identities ("errors.Is works
// with nats.ErrTimeout and context.DeadlineExceeded (no reply in time)").
func TestAttemptTimeoutErrorIdentity(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	rnc := connect(t, s.URL())
	if _, err := rnc.Subscribe("silent", func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	_ = rnc.Flush()
	c := shim.NewClient(connect(t, s.URL()))
	_, err := c.Request(context.Background(), "silent", nil, shim.OperationID("x"), shim.Attempts(3),
		shim.AttemptTimeout(50*time.Millisecond), shim.Timeout(400*time.Millisecond))
	var se *shim.Error
	if !errors.As(err, &se) || len(se.Attempts) != 3 {
		t.Fatalf("got %v", err)
	}
	if !errors.Is(err, nats.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the call's error: %v", err)
	}
	for i, ae := range se.Attempts {
		var e *shim.Error
		errors.As(ae, &e)
		if e.Code == shim.CodeDeadlineExceeded && (!errors.Is(ae, nats.ErrTimeout) || !errors.Is(ae, context.DeadlineExceeded)) {
			t.Errorf("attempt %d: code %s but errors.Is(nats.ErrTimeout)=%v, errors.Is(context.DeadlineExceeded)=%v: %v",
				i+1, e.Code, errors.Is(ae, nats.ErrTimeout), errors.Is(ae, context.DeadlineExceeded), ae)
		}
	}
}
