package xfer

import (
	"crypto/sha256"
	"hash"

	"github.com/minio/highwayhash"
)

// The digest an end frame carries: what the responder hashed, checked by
// the caller against what it received. It guards against faults (a frame
// lost, doubled or put together in the wrong order, a corrupted buffer),
// not against a forger: the responder writes the body and its digest
// alike, and anyone who could alter frames on the way could alter the end
// frame too; integrity against an attacker is the connection's (TLS).
// Both digests are 32 bytes (DigestSize).
//
// The caller lists the digests it checks beyond SHA-256 in its stream
// request (shim's HeaderStream); the responder names the one it uses in
// its start frame. A peer that names none uses SHA-256, so either side
// of this version meets an older one.
const (
	// DigestSHA256 is SHA-256, which every version of the protocol checks.
	DigestSHA256 byte = 0
	// DigestHighway is HighwayHash-256 under HighwayKey, the hash
	// nats-server checks its file store's messages with: several times
	// SHA-256's speed (about 8 GB/s here against 1.7), which matters at
	// both ends of a stream that moves hundreds of MB/s.
	DigestHighway byte = 1
)

// HighwayKey is the fixed, public key of DigestHighway: the digest detects
// faults, so its key is no secret.
var HighwayKey = [32]byte{
	'n', 'a', 't', 's', 's', 'e', 'n', 'd', ' ', 's', 't', 'r', 'e', 'a', 'm', ' ',
	'd', 'i', 'g', 'e', 's', 't', ' ', 'v', '1', 0, 0, 0, 0, 0, 0, 0,
}

// HighwayToken is how a caller lists DigestHighway in its stream request.
const HighwayToken = "hw256"

// NewHash returns a new hash for the digest alg, or nil for one this
// version does not know.
func NewHash(alg byte) hash.Hash {
	switch alg {
	case DigestSHA256:
		return sha256.New()
	case DigestHighway:
		h, err := highwayhash.New(HighwayKey[:])
		if err != nil {
			panic("xfer: HighwayKey is not 32 bytes: " + err.Error()) // a constant: cannot happen
		}
		return h
	}
	return nil
}

// DigestName names the digest alg in errors.
func DigestName(alg byte) string {
	switch alg {
	case DigestSHA256:
		return "SHA-256"
	case DigestHighway:
		return "HighwayHash-256"
	}
	return "unknown digest"
}
