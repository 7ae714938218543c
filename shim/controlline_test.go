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
// sent) at the exact byte: 18 bytes are kept for the sizes, 1 plus the
// reply subject's length for a reply subject, 129 for a request's own
// inbox. One byte less is sent, and the connection stays up.
func TestControlLineBoundary(t *testing.T) {
	s := natstest.Start(t)
	nc := connect(t, s.URL())
	subj := func(n int) string { return "a." + strings.Repeat("x", n-2) }
	reply := "r.1"
	for _, tc := range []struct {
		name string
		max  int // the longest subject sent
		send func(subject string) error
	}{
		{"Publish", 4078, func(sb string) error { return shim.Publish(nc, sb, []byte("hello")) }},
		{"PublishContext", 4078, func(sb string) error { return shim.PublishContext(context.Background(), nc, sb, []byte("hello")) }},
		{"PublishMsg with reply and header", 4078 - 1 - len(reply), func(sb string) error {
			return shim.PublishMsg(nc, &nats.Msg{Subject: sb, Reply: reply, Header: nats.Header{"K": {"v"}}, Data: []byte("hello")})
		}},
		{"PublishMsgContext", 4078, func(sb string) error {
			return shim.PublishMsgContext(context.Background(), nc, &nats.Msg{Subject: sb, Data: []byte("hello")})
		}},
		{"Client.Request", 4078 - 129, func(sb string) error {
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
