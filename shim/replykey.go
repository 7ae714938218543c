package shim

import (
	"crypto/rand"
	"encoding/hex"
)

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
