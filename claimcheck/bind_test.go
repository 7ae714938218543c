package claimcheck_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
)

// TestNewWithoutJetStream: New on a server without JetStream fails at
// once (no responders), not when its context ends, although its requests
// are otherwise made again after a transient failure.
func TestNewWithoutJetStream(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t, natstest.MaxPayload(limit))
	_, js := connect(t, s.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	t0 := time.Now()
	_, err := claimcheck.New(ctx, js)
	if el := time.Since(t0); err == nil || !errors.Is(err, nats.ErrNoResponders) || el > 5*time.Second {
		t.Fatalf("New without JetStream: %v after %v, want no responders at once", err, el)
	}
}

// TestNewAcrossLostReply: the reply to New's first bucket lookup is lost
// (the link drops as it comes back; the client reconnects at once): New
// looks again and binds well within its context.
func TestNewAcrossLostReply(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	p := s.Proxy(t)
	_, js := connect(t, p.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond), nats.ReconnectBufSize(-1))
	p.On(natstest.Rule{Dir: natstest.ToClient, Op: "MSG", When: natstest.Before, Action: natstest.Cut,
		Match: func(f natstest.Frame) bool { return len(f.Data) > 0 && f.Data[0] == '{' }})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	t0 := time.Now()
	if _, err := claimcheck.New(ctx, js); err != nil || time.Since(t0) > 10*time.Second {
		t.Fatalf("New across a lost reply: %v after %v", err, time.Since(t0))
	}
}

// TestNewAccountWithoutJetStream: on a server with JetStream, an account
// without it gets an API error (JetStream not enabled for the account):
// New returns it at once, not when its context ends.
func TestNewAccountWithoutJetStream(t *testing.T) {
	t.Parallel()
	acc := server.NewAccount("NOJS")
	s := startOpts(t, func(o *server.Options) {
		o.Accounts = []*server.Account{acc}
		o.Users = []*server.User{{Username: "u", Password: "p", Account: acc}}
	})
	_, js := connect(t, s.ClientURL(), nats.UserInfo("u", "p"))
	t0 := time.Now()
	_, err := claimcheck.New(context.Background(), js)
	if el := time.Since(t0); err == nil || el > 5*time.Second {
		t.Fatalf("New in an account without JetStream: %v after %v, want its error at once", err, el)
	}
	t.Logf("%v", err)
}
