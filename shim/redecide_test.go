package shim_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// TestReconnectBetweenDecisionAndSend makes a reconnect to a lower account
// limit fall exactly between a sender's decision (the message fits the old
// limit) and its send: nats.go refuses the send without writing anything,
// the sender decides again with the new limit and refuses the message
// locally, and the connection stays open.
func TestReconnectBetweenDecisionAndSend(t *testing.T) {
	t.Parallel()
	opts := func(account int32) []natstest.Option {
		return []natstest.Option{natstest.MaxPayload(64 << 10),
			natstest.WithAccount(natstest.Account{Name: "SMALL", User: "small", Password: "pw", MaxPayload: account})}
	}
	s := natstest.Start(t, opts(32<<10)...)
	g := &natstest.InfoGate{}
	reconnected := make(chan struct{}, 1)
	nc, err := shim.Connect(s.UserURL("small"), nats.SetCustomDialer(g), nats.ReconnectWait(10*time.Millisecond),
		nats.ReconnectHandler(func(*nats.Conn) { reconnected <- struct{}{} }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	st := connlimit.For(nc)
	c := shim.NewClient(nc)
	if l, err := c.Limit(context.Background()); err != nil || l != 32<<10 {
		t.Fatalf("limit %d, %v", l, err)
	}
	restartOnce := func() {
		st.SetBeforeSend(nil)
		gate := g.Hold() // the new link's limit waits
		r0 := nc.Stats().Reconnects
		s.Restart(opts(8 << 10)...)
		natstest.Reconnected(t, nc, r0)
		time.AfterFunc(50*time.Millisecond, func() { close(gate) })
	}

	for name, send := range map[string]func() error{
		"Publish": func() error { return shim.Publish(nc, "redecide", make([]byte, 20<<10)) },
		"Request": func() error { _, err := c.Request(context.Background(), "redecide", make([]byte, 20<<10)); return err },
		"Request with Attempts": func() error {
			_, err := c.Request(context.Background(), "redecide", make([]byte, 20<<10), shim.Attempts(2))
			return err
		},
		"RequestStream": func() error {
			_, err := c.RequestStream(context.Background(), "redecide", make([]byte, 20<<10))
			return err
		},
		"RequestMany": func() error {
			for _, err := range c.RequestMany(context.Background(), "redecide", make([]byte, 20<<10)) {
				return err
			}
			return nil
		},
	} {
		before := st.Redecisions()
		st.SetBeforeSend(restartOnce)
		err := send()
		<-reconnected
		var e *shim.Error
		if !errors.As(err, &e) || e.Code != shim.CodePayloadTooLarge || e.Sent || shim.Classify(err) != shim.OutcomeNotRun {
			t.Fatalf("%s: %v, want a local PAYLOAD_TOO_LARGE, not run", name, err)
		}
		if name != "Publish" && e.Limit != 8<<10 {
			t.Fatalf("%s: limit in the error %d, want the new account limit 8192", name, e.Limit)
		}
		if got := st.Redecisions() - before; got != 1 {
			t.Fatalf("%s: %d decisions taken again, want 1", name, got)
		}
		if err := nc.Flush(); err != nil || nc.IsClosed() {
			t.Fatalf("%s: connection after the refusal: %v, closed %v", name, err, nc.IsClosed())
		}
		// Back to the higher limit for the next sender.
		s.Restart(opts(32 << 10)...)
		<-reconnected
		natstest.Eventually(t, 10*time.Second, func() bool { l, err := c.Limit(context.Background()); return err == nil && l == 32<<10 }, "the higher limit")
	}
}

// A Handler's reply meets the same re-decision: a reconnect to a lower
// account limit between the reply's decision and its send makes nats.go
// refuse it unwritten, the Handler decides again against the new limit and
// answers PAYLOAD_TOO_LARGE, stating that limit; the connection stays open.
func TestReplyReconnectBetweenDecisionAndSend(t *testing.T) {
	t.Parallel()
	opts := func(account int32) []natstest.Option {
		return []natstest.Option{natstest.MaxPayload(64 << 10),
			natstest.WithAccount(natstest.Account{Name: "SMALL", User: "small", Password: "pw", MaxPayload: account})}
	}
	s := natstest.Start(t, opts(32<<10)...)
	g := &natstest.InfoGate{}
	rnc, err := shim.Connect(s.UserURL("small"), nats.SetCustomDialer(g), nats.ReconnectWait(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer rnc.Close()
	st := connlimit.For(rnc)
	reported := make(chan error, 4)
	var hooks atomic.Int64
	st.SetBeforeSend(func() {
		if hooks.Add(1) != 1 {
			return
		}
		gate := g.Hold() // the new link's limit waits
		r0 := rnc.Stats().Reconnects
		s.Restart(opts(8 << 10)...)
		natstest.Reconnected(t, rnc, r0)
		time.AfterFunc(50*time.Millisecond, func() { close(gate) })
	})
	defer st.SetBeforeSend(nil)
	h := shim.Handler(func(context.Context, *nats.Msg) ([]byte, error) { return make([]byte, 20<<10), nil },
		shim.Conn(rnc), shim.OnError(func(_ *nats.Msg, err error) { reported <- err }))
	if _, err := rnc.Subscribe("svc", h); err != nil {
		t.Fatal(err)
	}
	if err := rnc.Flush(); err != nil {
		t.Fatal(err)
	}
	before := st.Redecisions()
	nc := connect(t, s.UserURL("small"))
	_, _ = shim.NewClient(nc).Request(context.Background(), "svc", nil, shim.Timeout(5*time.Second)) // the caller's outcome depends on its own reconnect
	select {
	case err := <-reported:
		var e *shim.Error
		if !errors.As(err, &e) || e.Code != shim.CodePayloadTooLarge || e.Limit != 8<<10 {
			t.Fatalf("the Handler reported %v, want PAYLOAD_TOO_LARGE at the new 8192-byte limit", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the Handler reported nothing")
	}
	if got := st.Redecisions() - before; got < 1 {
		t.Fatalf("%d decisions taken again, want at least 1", got)
	}
	if rnc.IsClosed() {
		t.Fatal("the responder's connection closed")
	}
}
