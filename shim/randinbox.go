package shim

import (
	"crypto/rand"

	"github.com/nats-io/nats.go"
)

// randomInbox returns an inbox subject of nc (under its inbox prefix, so
// the permissions on the prefix apply) that ends in 128 random bits from
// crypto/rand: a subject whose owner trusts what arrives on it (a
// stream's frames, its control messages) must not be predictable from the
// ones before, as nats.go's NUID-based inboxes are to anyone who saw a
// few of them.
func randomInbox(nc *nats.Conn) string {
	return nc.NewInbox() + "." + rand.Text()
}
