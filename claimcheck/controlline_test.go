package claimcheck_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
)

// TestControlLineRefused: a subject that could make the message's protocol
// line longer than the server's max_control_line (4096 by default; the
// server would close the connection) is refused before anything is
// stored or sent, at the exact byte: 22 bytes for the sizes, and a
// JetStream publish keeps room for its reply inbox (1 plus the inbox
// prefix's length plus 64). The connection stays up.
func TestControlLineRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	nc, js := connect(t, s.URL())
	st := newStore(t, js)
	subj := func(n int) string { return "a." + strings.Repeat("x", n-2) }
	if err := st.PublishMsg(ctxT(t), &nats.Msg{Subject: subj(4074), Data: []byte("x")}); err != nil {
		t.Fatalf("PublishMsg, 4074-byte subject: %v", err)
	}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"PublishMsg", st.PublishMsg(ctxT(t), &nats.Msg{Subject: subj(4075), Data: payload(3*limit, 1)})},
		{"PublishJetStream", func() error {
			_, err := st.PublishJetStream(ctxT(t), &nats.Msg{Subject: subj(4074 - 1 - (len("_INBOX") + 64) + 1), Data: []byte("x")})
			return err
		}()},
	} {
		if !errors.Is(tc.err, nats.ErrBadSubject) || !errors.Is(tc.err, claimcheck.ErrNotPublished) {
			t.Errorf("%s: %v, want nats.ErrBadSubject and ErrNotPublished", tc.name, tc.err)
		}
	}
	if n := bucketMsgs(t, st); n != 0 {
		t.Errorf("%d messages stored", n)
	}
	if err := nc.Flush(); err != nil || !nc.IsConnected() {
		t.Fatalf("the connection: %v", err)
	}
}

// TestMetaTooLarge: on a connection whose max_payload is below what a
// long (but sendable) subject makes of the object's meta data, which
// records the subject, the claim check is refused before anything is
// stored: ErrTooLarge, saying the subject is too long.
func TestMetaTooLarge(t *testing.T) {
	t.Parallel()
	const small = 2048
	s := natstest.Start(t, natstest.MaxPayload(small), natstest.JetStream())
	_, js := connect(t, s.URL())
	st := newStore(t, js)
	subj := "np." + strings.Repeat("s", 3000)
	err := st.PublishMsg(ctxT(t), &nats.Msg{Subject: subj, Data: payload(2*small, 3)})
	if !errors.Is(err, claimcheck.ErrTooLarge) || !errors.Is(err, claimcheck.ErrNotPublished) || !strings.Contains(err.Error(), "subject is too long") {
		t.Fatalf("a %d-byte subject at max_payload %d: %v, want ErrTooLarge (the subject is too long)", len(subj), small, err)
	}
	if n := bucketMsgs(t, st); n != 0 {
		t.Errorf("%d messages stored", n)
	}
}
