package skiptests

import (
	"testing"

	"github.com/nats-io/nats.go"
)

func TestPublish(t *testing.T) { // want TestPublish:`sends via \(\*nats.Conn\).Publish`
	var nc *nats.Conn
	_ = nc.Publish("a", nil)
	_ = nc.Publish("a", nil) //natssend:reviewed
	t.Log("x")               //natssend:reviewed unused, but tests are skipped
	_, _ = nats.Connect("x")
	for nc.Publish("a", nil) != nil {
	}
}
