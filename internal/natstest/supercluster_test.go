package natstest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
)

// TestSuperClusterDelaysGateway: a request from a client of west to a
// responder on east crosses the gateway through a delay line each way,
// so its round trip is at least twice the line's one-way delay; JetStream
// answers in both clusters.
func TestSuperClusterDelaysGateway(t *testing.T) {
	const delay = 10 * time.Millisecond
	sc := natstest.StartSuperCluster(t, delay, 0)
	east, err := nats.Connect(sc.East.URL(), nats.ReconnectBufSize(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer east.Close()
	west, err := nats.Connect(sc.West.URL(), nats.ReconnectBufSize(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer west.Close()
	echo := func(m *nats.Msg) {
		_ = m.Respond(m.Data) //natssend:reviewed a test echo of a one-byte request
	}
	if _, err := east.Subscribe("echo", echo); err != nil {
		t.Fatal(err)
	}
	if err := east.Flush(); err != nil {
		t.Fatal(err)
	}
	natstest.Eventually(t, 20*time.Second, func() bool {
		_, err := west.Request("echo", []byte("x"), time.Second) //natssend:reviewed a test probe, tiny and idempotent
		return err == nil
	}, "west reaches east's responder")
	t0 := time.Now()
	resp, err := west.Request("echo", []byte("y"), 5*time.Second) //natssend:reviewed a test probe, tiny and idempotent
	if err != nil || string(resp.Data) != "y" {
		t.Fatalf("request across the gateway: %v", err)
	}
	if rtt := time.Since(t0); rtt < 2*delay {
		t.Fatalf("round trip across the gateway took %v, less than the line's %v", rtt, 2*delay)
	}
	for _, nc := range []*nats.Conn{east, west} {
		resp, err := nc.Request("$JS.API.INFO", nil, 5*time.Second) //natssend:reviewed a test probe, tiny and idempotent
		if err != nil || !strings.Contains(string(resp.Data), "io.nats.jetstream.api.v1.account_info_response") {
			t.Fatalf("JetStream account info from %s: %v", nc.ConnectedServerName(), err)
		}
	}
}
