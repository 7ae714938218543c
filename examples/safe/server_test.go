package orders_test

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// startServer starts a nats-server in this process, as a service's own
// tests would: a random local port, the given max_payload (0: the
// server's default) and JetStream in a temporary directory. It is shut
// down when the test ends. It returns the server's URL.
func startServer(t *testing.T, maxPayload int32) string {
	t.Helper()
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, MaxPayload: maxPayload,
		JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(func() {
		srv.Shutdown()
		srv.WaitForShutdown()
	})
	return srv.ClientURL()
}
