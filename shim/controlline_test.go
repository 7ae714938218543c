package shim_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// TestControlLineBoundary: a subject long enough that the message's
// protocol line could pass the server's max_control_line (4096 by
// default) would get the connection closed, failing everything else on
// it. Every send refuses it (INVALID_ARGUMENT, nats.ErrBadSubject, nothing
// sent) at the exact byte: 22 bytes are kept for the sizes, 1 plus the
// reply subject's length for a reply subject, 1 plus the inbox prefix's
// length plus 64 for a request's own inbox. One byte less is sent, and
// the connection stays up. A reply to a request whose reply subject is
// too long is refused the same way.
func TestControlLineBoundary(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	nc := connect(t, s.URL())
	subj := func(n int) string { return "a." + strings.Repeat("x", n-2) }
	reply := "r.1"
	for _, tc := range []struct {
		name string
		max  int // the longest subject sent
		send func(subject string) error
	}{
		{"Publish", 4074, func(sb string) error { return shim.Publish(nc, sb, []byte("hello")) }},
		{"PublishContext", 4074, func(sb string) error { return shim.PublishContext(context.Background(), nc, sb, []byte("hello")) }},
		{"PublishMsg with reply and header", 4074 - 1 - len(reply), func(sb string) error {
			return shim.PublishMsg(nc, &nats.Msg{Subject: sb, Reply: reply, Header: nats.Header{"K": {"v"}}, Data: []byte("hello")})
		}},
		{"PublishMsgContext", 4074, func(sb string) error {
			return shim.PublishMsgContext(context.Background(), nc, &nats.Msg{Subject: sb, Data: []byte("hello")})
		}},
		{"Client.Request", 4074 - 1 - (len("_INBOX") + 64), func(sb string) error {
			_, err := shim.NewClient(nc).Request(context.Background(), sb, []byte("q"), shim.Timeout(100*time.Millisecond))
			if errors.Is(err, nats.ErrNoResponders) {
				return nil // sent, and nobody serves it
			}
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.send(subj(tc.max)); err != nil {
				t.Fatalf("a %d-byte subject: %v", tc.max, err)
			}
			err := tc.send(subj(tc.max + 1))
			var e *shim.Error
			if !errors.As(err, &e) || e.Code != shim.CodeInvalidArgument || !errors.Is(err, nats.ErrBadSubject) || shim.Classify(err) != shim.OutcomeNotRun {
				t.Fatalf("a %d-byte subject: %v, want INVALID_ARGUMENT (nats.ErrBadSubject), not run", tc.max+1, err)
			}
			if err := nc.Flush(); err != nil || !nc.IsConnected() {
				t.Fatalf("the connection after the sends: %v, connected %v", err, nc.IsConnected())
			}
		})
	}
}

// TestControlLineCustomInboxPrefix: a long custom inbox prefix
// (nats.CustomInboxPrefix) makes the requests' own reply subjects longer:
// the room kept for them grows with it, so a subject that would pass with
// the default prefix is refused and the connection stays up.
func TestControlLineCustomInboxPrefix(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	prefix := "p." + strings.Repeat("i", 206)
	nc := connect(t, s.URL(), nats.CustomInboxPrefix(prefix))
	c := shim.NewClient(nc)
	longest := 4074 - 1 - (len(prefix) + 64)
	_, err := c.Request(context.Background(), "a."+strings.Repeat("x", longest-1), nil, shim.Timeout(100*time.Millisecond)) //natssend:reviewed retry: refused before sending; the next call is another subject
	if !errors.Is(err, nats.ErrBadSubject) {
		t.Fatalf("a %d-byte subject with a %d-byte inbox prefix: %v, want nats.ErrBadSubject", longest+1, len(prefix), err)
	}
	_, err = c.Request(context.Background(), "a."+strings.Repeat("x", longest-2), nil, shim.Timeout(100*time.Millisecond))
	if !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("a %d-byte subject: %v, want it sent (no responders)", longest, err)
	}
	if err := nc.Flush(); err != nil || !nc.IsConnected() {
		t.Fatalf("the connection: %v", err)
	}
}

// TestReplyToLongReplySubject: a requester may send a reply subject too
// long to answer (its own request line is short); Respond refuses it
// (INVALID_ARGUMENT, nats.ErrBadSubject) and the responder's connection
// stays up.
func TestReplyToLongReplySubject(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	rnc := connect(t, s.URL())
	errs := make(chan error, 1)
	if _, err := rnc.Subscribe("svc", func(m *nats.Msg) { errs <- shim.Respond(m, make([]byte, 100000), nil) }); err != nil {
		t.Fatal(err)
	}
	_ = rnc.Flush()
	nc := connect(t, s.URL())
	reply := "r." + strings.Repeat("y", 4090-2)
	if err := nc.PublishRequest("svc", reply, []byte("q")); err != nil { //natssend:reviewed a reply subject too long to answer, for the test
		t.Fatal(err)
	}
	err := <-errs
	if !errors.Is(err, nats.ErrBadSubject) || shim.Classify(err) != shim.OutcomeNotRun {
		t.Fatalf("Respond to a %d-byte reply subject: %v", len(reply), err)
	}
	if err := rnc.Flush(); err != nil || !rnc.IsConnected() {
		t.Fatalf("the responder's connection: %v", err)
	}
}
