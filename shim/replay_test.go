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

// TestRawReconnectBufferReplays documents the failure the shim prevents:
// with nats.go's default reconnect buffer, a request made while the
// connection is down times out for its caller and is still delivered after
// the reconnect.
func TestRawReconnectBufferReplays(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	var runs counter
	raw, err := nats.Connect(s.URL(), nats.ReconnectWait(20*time.Millisecond), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	// The responder shares the connection, so that its subscription is
	// restored before the buffered request is flushed.
	if _, err := raw.Subscribe("pay", func(m *nats.Msg) { runs.inc() }); err != nil {
		t.Fatal(err)
	}
	if err := raw.Flush(); err != nil {
		t.Fatal(err)
	}
	s.Shutdown()
	natstest.Eventually(t, 5*time.Second, raw.IsReconnecting, "disconnect")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err = raw.RequestWithContext(ctx, "pay", []byte("charge"))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("raw request while down: %v", err)
	}
	s.Restart()
	natstest.Eventually(t, 10*time.Second, func() bool { return runs.get() == 1 }, "the buffered request to be delivered after reconnect")
}

// TestNoReplayAcrossReconnect: the same sequence through the shim fails at
// once as not sent, and nothing arrives after the reconnect.
func TestNoReplayAcrossReconnect(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	var runs counter
	responder := serve(t, s, "pay", func(m *nats.Msg) { runs.inc(); _ = shim.Respond(m, []byte("ok"), nil) })
	nc := connect(t, s.URL())
	c := shim.NewClient(nc)
	s.Shutdown()
	natstest.Eventually(t, 5*time.Second, nc.IsReconnecting, "disconnect")
	_, err := c.Request(context.Background(), "pay", []byte("charge"), shim.Timeout(100*time.Millisecond))
	if !errors.Is(err, nats.ErrConnectionReconnecting) || shim.Classify(err) != shim.OutcomeNotRun {
		t.Fatalf("request while reconnecting: want a not-sent ErrConnectionReconnecting, got %v (%v)", err, shim.Classify(err))
	}
	s.Restart()
	natstest.Eventually(t, 10*time.Second, func() bool {
		return nc.IsConnected() && responder.IsConnected() && responder.Flush() == nil
	}, "reconnect")
	stays(t, 300*time.Millisecond, func() bool { return runs.get() == 0 }, "no delivery after reconnect")
	// The connection works, and the next request is delivered once.
	if _, err := c.Request(context.Background(), "pay", []byte("charge-2")); err != nil {
		t.Fatal(err)
	}
	stays(t, 200*time.Millisecond, func() bool { return runs.get() == 1 }, "exactly one delivery")
}

// TestSlowResponderAcrossReconnect: the caller times out while the server
// restarts; the responder ran once and nothing is delivered again.
func TestSlowResponderAcrossReconnect(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	var runs counter
	got := make(chan struct{}, 4)
	responder := serve(t, s, "slow", func(m *nats.Msg) {
		runs.inc()
		got <- struct{}{}
		time.Sleep(800 * time.Millisecond) // slower than the caller's 500 ms
		_ = shim.Respond(m, []byte("late"), nil)
	})
	nc := connect(t, s.URL())
	c := shim.NewClient(nc)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Request(context.Background(), "slow", []byte("x"), shim.Timeout(500*time.Millisecond))
		errc <- err
	}()
	<-got
	s.Restart()
	err := <-errc
	if !errors.Is(err, nats.ErrTimeout) || shim.Classify(err) != shim.OutcomeUnknown {
		t.Fatalf("want a timeout whose outcome is unknown, got %v (%v)", err, shim.Classify(err))
	}
	natstest.Eventually(t, 10*time.Second, func() bool {
		return nc.IsConnected() && responder.IsConnected() && responder.Flush() == nil
	}, "reconnect")
	stays(t, time.Second, func() bool { return runs.get() == 1 }, "exactly one run")
}

// TestConnectionDroppedMidCall: the server drops the caller's connection
// while the responder works: the caller gets an error and the request is
// not delivered a second time.
func TestConnectionDroppedMidCall(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	var runs counter
	got := make(chan struct{}, 4)
	serve(t, s, "work", func(m *nats.Msg) {
		runs.inc()
		got <- struct{}{}
		time.Sleep(400 * time.Millisecond) // still working when the caller's link drops
		_ = shim.Respond(m, []byte("done"), nil)
	})
	nc := connect(t, s.URL())
	c := shim.NewClient(nc)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Request(context.Background(), "work", []byte("x"), shim.Timeout(300*time.Millisecond))
		errc <- err
	}()
	<-got
	cid, err := nc.GetClientID()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Server().DisconnectClientByID(cid); err != nil {
		t.Fatal(err)
	}
	err = <-errc
	if err == nil || shim.Classify(err) != shim.OutcomeUnknown {
		t.Fatalf("want an error with an unknown outcome, got %v (%v)", err, shim.Classify(err))
	}
	natstest.Eventually(t, 10*time.Second, nc.IsConnected, "reconnect")
	stays(t, 500*time.Millisecond, func() bool { return runs.get() == 1 }, "exactly one delivery")
}

func TestConnectRefusesReconnectBuffer(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	for _, size := range []int{0, 1024, nats.DefaultReconnectBufSize} {
		nc, err := shim.Connect(s.URL(), nats.ReconnectBufSize(size))
		if !errors.Is(err, shim.ErrReconnectBuffer) {
			t.Errorf("ReconnectBufSize(%d): want ErrReconnectBuffer, got %v", size, err)
		}
		if nc != nil {
			nc.Close()
		}
	}
	nc, err := shim.Connect(s.URL(), nats.ReconnectBufSize(-1))
	if err != nil {
		t.Fatalf("ReconnectBufSize(-1) is what Connect sets anyway: %v", err)
	}
	nc.Close()
}

func TestConnectChainsReconnectHandler(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	called := make(chan struct{}, 1)
	nc := connect(t, s.URL(), nats.ReconnectHandler(func(*nats.Conn) { called <- struct{}{} }))
	s.Restart()
	select {
	case <-called:
	case <-time.After(10 * time.Second):
		t.Fatal("the caller's reconnect handler was not called")
	}
	if !nc.IsConnected() {
		t.Fatal("not connected")
	}
}
