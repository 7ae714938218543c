package shim

import (
	"crypto/rand"
	"encoding/hex"

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

// newReplyKey returns a call's reply key: 128 random bits from
// crypto/rand as 32 lowercase hex digits, sent in the accept header
// (reply-key) of every attempt of one call.
func newReplyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// validReplyKey reports whether k has a reply key's form (32 lowercase
// hex digits); a responder ignores any other.
func validReplyKey(k string) bool {
	if len(k) != 32 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
