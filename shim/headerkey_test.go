package shim_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// TestPublishBadHeaderKeyNotSent: a header key nats.go refuses gives the
// same typed refusal, naming the key, on every publish path: a message
// that fits on a connection made by Connect (nats.go's own check, the
// fast path), on a plain connection, and a message too large for the
// limit (checked before the claim check's upload). Nothing is delivered
// and nothing is stored.
func TestPublishBadHeaderKeyNotSent(t *testing.T) {
	_, guarded, plain, sub := refusalEnv(t, "hk.>")
	for _, key := range []string{"Bad Key", "a:b", "", "\u00e9t\u00e9"} {
		for name, nc := range map[string]*nats.Conn{"Connect": guarded, "plain": plain} {
			for _, size := range []int{16, 8192} {
				m := &nats.Msg{Subject: "hk.x", Data: make([]byte, size), Header: nats.Header{"Ok": {"1"}, key: {"v"}}}
				err := shim.PublishMsgContext(context.Background(), nc, m)
				notRun(t, name+": key "+key, err, shim.CodeInvalidArgument, nats.ErrBadHeaderMsg)
				if !strings.Contains(err.Error(), "invalid header key") {
					t.Fatalf("%s, key %q, %d bytes: %v does not name the header key", name, key, size, err)
				}
				notRun(t, name+": PublishMsg, key "+key, shim.PublishMsg(nc, m), shim.CodeInvalidArgument, nats.ErrBadHeaderMsg)
			}
		}
	}
	noneSent(t, guarded, sub)
}

// TestPublishBadSubjectNotSent: a subject or reply subject nats.go
// refuses (empty, or with a space, tab, CR or LF) gives the same typed
// refusal, naming it, on every publish path: a message that fits on a
// connection made by Connect (nats.go's own check, the fast path), on a
// plain connection, on one that skips nats.go's subject check, and a
// message too large for the limit. Nothing is delivered, nothing stored.
func TestPublishBadSubjectNotSent(t *testing.T) {
	t.Parallel()
	s, guarded, plain, sub := refusalEnv(t, ">")
	skipping := connect(t, s.URL(), func(o *nats.Options) error { o.SkipSubjectValidation = true; return nil })
	conns := map[string]*nats.Conn{"Connect": guarded, "SkipSubjectValidation": skipping, "plain": plain}
	for _, bad := range []string{"", "bs x", "bs\tx", "bs\r\nx", "bs.x\n"} {
		for name, nc := range conns {
			for _, size := range []int{16, 8192} {
				for _, m := range []*nats.Msg{
					{Subject: bad, Data: make([]byte, size)},
					{Subject: "bs.ok", Reply: bad, Data: make([]byte, size)},
				} {
					if bad == "" && m.Subject != "" {
						continue // an empty reply subject is no reply subject
					}
					what := fmt.Sprintf("%s, subject %q, reply %q, %d bytes", name, m.Subject, m.Reply, size)
					err := shim.PublishMsgContext(context.Background(), nc, m)
					notRun(t, what, err, shim.CodeInvalidArgument, nats.ErrBadSubject)
					if !strings.Contains(err.Error(), fmt.Sprintf("subject %q", bad)) {
						t.Fatalf("%s: %v does not name the subject", what, err)
					}
					notRun(t, "PublishMsg: "+what, shim.PublishMsg(nc, m), shim.CodeInvalidArgument, nats.ErrBadSubject)
					if m.Reply == "" {
						notRun(t, "Publish: "+what, shim.Publish(nc, m.Subject, m.Data), shim.CodeInvalidArgument, nats.ErrBadSubject)
						notRun(t, "PublishContext: "+what, shim.PublishContext(context.Background(), nc, m.Subject, m.Data), shim.CodeInvalidArgument, nats.ErrBadSubject)
					}
				}
			}
		}
	}
	noneSent(t, guarded, sub)
}

// refusalEnv starts a server with JetStream and a 4 KiB max_payload and
// returns it, a connection made by Connect, a plain one, and the first's
// subscription to watch (its interest already at the server).
func refusalEnv(t *testing.T, watch string) (*natstest.Server, *nats.Conn, *nats.Conn, *nats.Subscription) {
	t.Helper()
	s := natstest.Start(t, natstest.JetStream(), natstest.MaxPayload(4096))
	guarded := connect(t, s.URL())
	plain, err := nats.Connect(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(plain.Close)
	sub, err := guarded.SubscribeSync(watch)
	if err != nil {
		t.Fatal(err)
	}
	if err := guarded.Flush(); err != nil {
		t.Fatal(err)
	}
	return s, guarded, plain, sub
}

// noneSent fails t if sub received a message or a stream holds one.
func noneSent(t *testing.T, nc *nats.Conn, sub *nats.Subscription) {
	t.Helper()
	if m, err := sub.NextMsg(200 * time.Millisecond); err == nil {
		t.Fatalf("delivered: %+v", m)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	for name := range js.StreamNames(context.Background()).Name() {
		st, err := js.Stream(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		if n := st.CachedInfo().State.Msgs; n != 0 {
			t.Fatalf("stream %s holds %d messages", name, n)
		}
	}
}
