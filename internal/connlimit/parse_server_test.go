package connlimit_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/natstest"
)

// escapedSubjects are subjects holding every byte the server's %q escapes
// that a client can send in a subject (all but the protocol's separators:
// space, tab, CR, LF), and runes it escapes or keeps: a quote, a
// backslash, control bytes, DEL, every byte from 0x80 (alone: not UTF-8),
// non-printable format characters (U+200B, U+FEFF, U+2028), a printable
// non-ASCII letter, and a truncated UTF-8 sequence.
func escapedSubjects() []string {
	var subjects []string
	for b := 0; b < 256; b++ {
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		}
		subjects = append(subjects, "deny.a"+string([]byte{byte(b)})+"b")
	}
	for _, s := range []string{"\u200b", "\ufeff", "\u2028", "é", "\xe2\x80", `\"`, `"\`, `\x41`, `\u0041`} {
		subjects = append(subjects, "deny.q"+s+"z")
	}
	return subjects
}

// TestParseDenialServerText: for each subject of escapedSubjects, the
// server's own text of a dropped publish, a refused subscription and a
// refused queue subscription (as nats.go hands it to the error callback)
// parses to exactly the subject (and queue group) that was sent.
func TestParseDenialServerText(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t, natstest.WithUser(natstest.User{Name: "narrow", Password: "p", Publish: []string{"ok"}, Subscribe: []string{"ok"}}))
	errs := make(chan error, 1024)
	nc, err := nats.Connect(s.UserURL("narrow"), nats.ReconnectBufSize(-1), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	next := func(what string) *connlimit.Denial {
		t.Helper()
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-errs:
			return connlimit.ParseDenial(err)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the server reported nothing", what)
			return nil
		}
	}
	escaped := 0
	for _, subj := range escapedSubjects() {
		if strings.Contains(fmt.Sprintf("%q", subj), `\`) {
			escaped++
		}
		if err := nc.Publish(subj, nil); err != nil { //natssend:reviewed a raw publish the server refuses
			t.Fatalf("publish %q: %v", subj, err)
		}
		if d := next("publish " + fmt.Sprintf("%q", subj)); d == nil || d.Op != "publish" || d.Subject != subj {
			t.Errorf("publish to %q: parsed %+v", subj, d)
		}
		sub, err := nc.Subscribe(subj, func(*nats.Msg) {})
		if err != nil {
			t.Fatalf("subscribe %q: %v", subj, err)
		}
		if d := next("subscribe " + fmt.Sprintf("%q", subj)); d == nil || d.Op != "subscribe" || d.Subject != subj || d.Queue != "" {
			t.Errorf("subscription to %q: parsed %+v", subj, d)
		}
		_ = sub.Unsubscribe()
		queue := "q" + subj[len("deny."):]
		if sub, err = nc.QueueSubscribe(subj, queue, func(*nats.Msg) {}); err != nil {
			t.Fatalf("queue subscribe %q %q: %v", subj, queue, err)
		}
		if d := next("queue " + fmt.Sprintf("%q", subj)); d == nil || d.Op != "subscribe" || d.Subject != subj || d.Queue != queue {
			t.Errorf("subscription to %q in %q: parsed %+v", subj, queue, d)
		}
		_ = sub.Unsubscribe()
	}
	if escaped < 160 {
		t.Fatalf("only %d subjects were escaped by %%q", escaped)
	}
}
