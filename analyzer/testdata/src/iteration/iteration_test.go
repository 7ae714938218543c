package iteration

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Table-driven negative test: every invalid name is tried once; the test
// fails when one is accepted.
func TestInvalidSubjects(t *testing.T) { // want TestInvalidSubjects:`sends via \(jetstream\.Publisher\)\.Publish`
	var js jetstream.JetStream
	invalidNames := []string{"", "a..b", "a b", ">.x"}
	for _, name := range invalidNames {
		_, err := js.Publish(context.Background(), name, []byte("x"))
		if err == nil {
			t.Fatalf("publish to %q: want an error", name)
		}
	}
}

// The same through a wrapper whose meaning the analyzer cannot see.
func TestInvalidThroughHelper(t *testing.T) {
	var nc *nats.Conn
	op := func(name string) error { return nc.Publish(name, nil) }
	for _, name := range []string{"", "a b"} {
		if err := op(name); err == nil {
			t.Fatal("accepted", name)
		}
	}
}

// Table-driven with subtests.
func TestRequests(t *testing.T) {
	var nc *nats.Conn
	for _, tc := range []struct {
		name    string
		subject string
		wantErr error
	}{
		{"none listening", "nobody.home", nats.ErrNoResponders},
		{"slow", "svc.slow", nats.ErrTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := nc.Request(tc.subject, nil, 10*time.Millisecond)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("got %v, want %v", err, tc.wantErr)
			}
		})
	}
}

// Waiting for a responder in a test: the same request again after a
// failure, and t.Fatal on the last attempt.
func TestWaitForService(t *testing.T) { // want TestWaitForService:`sends via \(\*nats\.Conn\)\.Request`
	var nc *nats.Conn
	for i := 0; ; i++ {
		_, err := nc.Request("svc.ping", nil, 100*time.Millisecond) // want `call of \(\*nats.Conn\).Request is retried on failure`
		if err == nil {
			break
		}
		if i == 20 {
			t.Fatal("service did not come up:", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// requireIs stops the test unless err is target.
func requireIs(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("got %v, want %v", err, target)
	}
}

// Publishing async until the client accepts it again: the only error that
// loops is a local refusal, asserted by the helper.
func publishAsyncWhenReady(t testing.TB, js nats.JetStreamContext, data []byte) nats.PubAckFuture { // want publishAsyncWhenReady:`sends via \(nats\.JetStream\)\.PublishAsync`
	for {
		f, err := js.PublishAsync("events", data)
		if err == nil {
			return f
		}
		requireIs(t, err, nats.ErrTooManyStalledMsgs)
	}
}

// Near miss: the helper asserts a timeout, which may follow a delivery.
func publishAsyncAfterTimeout(t testing.TB, js nats.JetStreamContext, data []byte) nats.PubAckFuture { // want publishAsyncAfterTimeout:`sends via \(nats\.JetStream\)\.PublishAsync`
	for {
		f, err := js.PublishAsync("events", data) // want `call of \(nats.JetStream\).PublishAsync is retried on failure`
		if err == nil {
			return f
		}
		requireIs(t, err, nats.ErrTimeout)
	}
}

// Requests that must time out, one after another: a reply fails the test.
func TestQueueUpWaiters(t *testing.T) { // want TestQueueUpWaiters:`sends via \(\*nats\.Conn\)\.Request`
	var nc *nats.Conn
	for i := 0; i < 10; i++ {
		if _, err := nc.Request("work.next", nil, time.Microsecond); err != nats.ErrTimeout {
			t.Fatalf("want a timeout, got %v", err)
		}
	}
}

// Waiting for the service, then checking something else: the t.Fatal on
// the success path is about another error, so this is still a retry.
func TestAfterServiceUp(t *testing.T) { // want TestAfterServiceUp:`sends via \(\*nats\.Conn\)\.Request`
	var nc *nats.Conn
	check := func() error { return nil }
	for {
		_, err := nc.Request("svc.info", nil, time.Second) // want `call of \(\*nats.Conn\).Request is retried on failure`
		if err != nil {
			continue
		}
		err = check()
		if err != nil {
			t.Fatal(err)
		}
		return
	}
}

// The same with the callback's error in its own variable.
func TestAfterServiceUpShadowed(t *testing.T) { // want TestAfterServiceUpShadowed:`sends via \(\*nats\.Conn\)\.Request`
	var nc *nats.Conn
	check := func() error { return nil }
	for {
		if _, err := nc.Request("svc.info", nil, time.Second); err != nil { // want `call of \(\*nats.Conn\).Request is retried on failure`
			continue
		}
		if err := check(); err != nil {
			t.Fatal(err)
		}
		return
	}
}
