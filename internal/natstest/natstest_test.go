package natstest_test

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
)

func TestAccountLimitArrivesAfterFirstPong(t *testing.T) {
	s := natstest.Start(t, natstest.MaxPayload(4096), natstest.JetStream(),
		natstest.WithAccount(natstest.Account{Name: "SMALL", User: "small", Password: "pw", MaxPayload: 512}))
	nc, err := nats.Connect(s.UserURL("small"), nats.ReconnectBufSize(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := nc.MaxPayload(); got != 512 {
		t.Fatalf("account max_payload after flush = %d, want 512", got)
	}
	def, err := nats.Connect(s.URL(), nats.ReconnectBufSize(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer def.Close()
	if err := def.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := def.MaxPayload(); got != 4096 {
		t.Fatalf("default account max_payload = %d, want 4096", got)
	}
	js, err := def.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.AccountInfo(); err != nil {
		t.Fatalf("JetStream not enabled for the default account: %v", err)
	}
}

func TestRestartKeepsPortAndChangesLimit(t *testing.T) {
	s := natstest.Start(t, natstest.MaxPayload(4096))
	port := s.Port()
	reconnected := make(chan struct{}, 1)
	nc, err := nats.Connect(s.URL(), nats.ReconnectBufSize(-1), nats.ReconnectWait(20*time.Millisecond), nats.MaxReconnects(-1),
		nats.ReconnectHandler(func(*nats.Conn) { reconnected <- struct{}{} }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	s.Restart(natstest.MaxPayload(1024))
	if s.Port() != port {
		t.Fatalf("port changed from %d to %d", port, s.Port())
	}
	select {
	case <-reconnected:
	case <-time.After(10 * time.Second):
		t.Fatal("no reconnect")
	}
	if got := nc.MaxPayload(); got != 1024 {
		t.Fatalf("max_payload after restart = %d, want 1024", got)
	}
}
