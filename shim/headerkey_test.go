package shim_test

import (
	"context"
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
	s := natstest.Start(t, natstest.JetStream(), natstest.MaxPayload(4096))
	guarded := connect(t, s.URL())
	plain, err := nats.Connect(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(plain.Close)
	sub, err := guarded.SubscribeSync("hk.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := guarded.Flush(); err != nil {
		t.Fatal(err)
	}
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
	if m, err := sub.NextMsg(200 * time.Millisecond); err == nil {
		t.Fatalf("delivered: %+v", m)
	}
	js, err := jetstream.New(guarded)
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
