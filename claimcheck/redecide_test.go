package claimcheck_test

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// Every Store sender calls the before-send hook between its decision and
// its send, and decides again when a reconnect to a lower limit falls
// exactly there: a 20 KiB message that fit the old 32 KiB account limit
// is refused unwritten by nats.go, decided again against the new 8 KiB
// limit, and goes as a claim check, whose reference is sent through the
// hook too. The receiver gets the whole body; the connection stays open.
func TestStoreSendersDecideAgainOnALinkChange(t *testing.T) {
	t.Parallel()
	opts := func(account int32) []natstest.Option {
		return []natstest.Option{natstest.MaxPayload(64 << 10), natstest.JetStream(),
			natstest.WithAccount(natstest.Account{Name: "SMALL", User: "small", Password: "pw", MaxPayload: account})}
	}
	s := natstest.Start(t, opts(32<<10)...)
	g := &natstest.InfoGate{}
	nc, err := shim.Connect(s.UserURL("small"), nats.SetCustomDialer(g), nats.ReconnectWait(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st := newStore(t, js, claimcheck.WithStorage(jetstream.FileStorage))
	if _, err := js.CreateStream(ctxT(t), jetstream.StreamConfig{Name: "REDECIDE", Subjects: []string{"js.redecide"}}); err != nil {
		t.Fatal(err)
	}
	core := make(chan *nats.Msg, 4)
	if _, err := nc.ChanSubscribe("redecide", core); err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
	ls := connlimit.For(nc)
	body := payload(20<<10, 5)

	for _, tc := range []struct {
		name string
		send func(ctx context.Context) error
		got  func() *nats.Msg
	}{
		{"PublishMsg", func(ctx context.Context) error {
			return st.PublishMsg(ctx, &nats.Msg{Subject: "redecide", Data: body})
		}, func() *nats.Msg { return recv(t, core) }},
		{"PublishJetStream", func(ctx context.Context) error {
			_, err := st.PublishJetStream(ctx, &nats.Msg{Subject: "js.redecide", Data: body})
			return err
		}, func() *nats.Msg {
			str, err := js.Stream(ctxT(t), "REDECIDE")
			if err != nil {
				t.Fatal(err)
			}
			m, err := str.GetLastMsgForSubject(ctxT(t), "js.redecide")
			if err != nil {
				t.Fatal(err)
			}
			return &nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data}
		}},
	} {
		natstest.Eventually(t, 10*time.Second, func() bool { l, err := ls.Limit(context.Background()); return err == nil && l == 32<<10 }, "the 32 KiB limit")
		var hooks atomic.Int64
		ls.SetBeforeSend(func() {
			if hooks.Add(1) != 1 {
				return
			}
			gate := g.Hold() // the new link's limit waits
			r0 := nc.Stats().Reconnects
			s.Restart(opts(8 << 10)...)
			natstest.Reconnected(t, nc, r0)
			time.AfterFunc(50*time.Millisecond, func() { close(gate) })
		})
		before := ls.Redecisions()
		err := tc.send(ctxT(t))
		ls.SetBeforeSend(nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := ls.Redecisions() - before; got < 1 {
			t.Fatalf("%s: %d decisions taken again, want at least 1", tc.name, got)
		}
		if n := hooks.Load(); n < 2 {
			t.Fatalf("%s: the before-send hook ran %d times, want the message and its reference", tc.name, n)
		}
		m := tc.got()
		if !claimcheck.IsClaimCheck(m) {
			t.Fatalf("%s: the receiver got a plain %d-byte message, want a claim check", tc.name, len(m.Data))
		}
		data, err := st.Resolve(ctxT(t), m)
		if err != nil || !bytes.Equal(data, body) {
			t.Fatalf("%s: resolve: %v", tc.name, err)
		}
		if nc.IsClosed() {
			t.Fatalf("%s: the connection closed", tc.name)
		}
		s.Restart(opts(32 << 10)...)
	}
}
