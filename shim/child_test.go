package shim_test

import (
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
)

// The child-process entry points of the benchmarks (natstest.StartChild):
// each starts a server, and the responders a benchmark needs, in a process
// of its own, so that the benchmark times and counts the client only. In a
// normal test run they skip.

// TestChildSmallResponder is the child process of BenchmarkRequestClaimChecks:
// the 64 KiB JetStream server and a raw responder on "svc". It does nothing
// in a normal test run.
func TestChildSmallResponder(t *testing.T) {
	natstest.ServeChild(t, func(t *testing.T) string {
		s := natstest.Start(t, natstest.MaxPayload(overflowLimit), natstest.JetStream())
		rnc := connect(t, s.URL())
		if _, err := rnc.Subscribe("svc", func(m *nats.Msg) { _ = m.Respond([]byte("ok")) }); err != nil { //natssend:reviewed benchmark responder
			t.Fatal(err)
		}
		if err := rnc.Flush(); err != nil {
			t.Fatal(err)
		}
		return s.URL()
	})
}

// TestChildServer is the child process of the hot-path benchmarks: a 1 MiB
// server and a raw responder on "svc" that answers "ok".
func TestChildServer(t *testing.T) {
	natstest.ServeChild(t, func(t *testing.T) string {
		s := natstest.Start(t, natstest.MaxPayload(1<<20))
		rnc := connect(t, s.URL())
		if _, err := rnc.Subscribe("svc", func(m *nats.Msg) { _ = m.Respond([]byte("ok")) }); err != nil { //natssend:reviewed benchmark responder
			t.Fatal(err)
		}
		if err := rnc.Flush(); err != nil {
			t.Fatal(err)
		}
		return s.URL()
	})
}
