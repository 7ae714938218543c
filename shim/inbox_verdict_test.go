package shim_test

import (
	"context"
	"testing"
	"time"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// TestInboxRefusedOneSubscriptionPerCall: while the caller may not
// subscribe to its inbox, each call after the first makes its reply
// subscription once and learns the server's verdict on it in that one
// round trip (PERMISSION_DENIED, not run): it does not subscribe again
// to find out twice.
func TestInboxRefusedOneSubscriptionPerCall(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t,
		natstest.WithUser(natstest.User{Name: "noinbox", Password: "p", Publish: []string{"svc.>"}, Subscribe: []string{"svc.none"}}))
	p := s.Proxy(t)
	subs := p.On(natstest.Rule{Dir: natstest.ToServer, Op: "SUB", Subject: "_INBOX.>", Every: true})
	nc := connect(t, "nats://noinbox:p@"+p.URL()[len("nats://"):])
	c := shim.NewClient(nc, shim.WithTimeout(10*time.Second))
	ctx := context.Background()
	t0 := time.Now()
	_, err := c.Request(ctx, "svc.echo", []byte("first"))
	deniedWithin(t, err, time.Since(t0), "_INBOX", shim.OutcomeUnknown)
	before := subs.Count()
	const calls = 5
	for range calls {
		t0 = time.Now()
		_, err = c.Request(ctx, "svc.echo", []byte("x"))
		deniedWithin(t, err, time.Since(t0), "_INBOX", shim.OutcomeNotRun)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := subs.Count() - before; n != calls {
		t.Errorf("%d calls made %d inbox subscriptions; want one each", calls, n)
	}
}
