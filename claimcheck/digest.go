package claimcheck

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"hash"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/internal/xfer"
)

// metaDigestKey is the key in an object's metadata under which the Store
// records the payload's HighwayHash-256 (xfer.DigestHighway, under
// xfer.HighwayKey) in base64url with padding, as the object store writes
// its SHA-256 digest. The SHA-256 digest the object-store format needs is
// written too (nats.go's Get and the nats CLI check it); a read checks the
// HighwayHash when the metadata has this key (several times SHA-256's
// speed), SHA-256 when it has not (an object that an older Store, nats.go
// or the nats CLI wrote). The digest detects faults, not forgers: whoever
// may write the meta message may write either digest.
const metaDigestKey = "natssend-hh256"

// highwayDigestLen is the length of a HighwayHash-256 entry's value: 32
// bytes in padded base64.
const highwayDigestLen = (32 + 2) / 3 * 4

// highwayPlaceholder has the length of a real HighwayHash-256 entry, for
// sizing the meta message before the payload is hashed.
var highwayPlaceholder = encodeHighway(make([]byte, 32))

func encodeHighway(sum []byte) string { return base64.URLEncoding.EncodeToString(sum) }

// payloadDigests hashes data in pieces of chunk bytes, each piece into
// both digests while it is in the cache, and returns the object-store
// digest value (SHA-256=...) and the HighwayHash-256 entry's value.
func payloadDigests(data []byte, chunk int) (objDigest, highway string) {
	sh := sha256.New()
	hw := xfer.NewHash(xfer.DigestHighway)
	for off := 0; off < len(data); off += chunk {
		p := data[off:min(off+chunk, len(data))]
		sh.Write(p)
		hw.Write(p)
	}
	return jetstream.GetObjectDigestValue(sh), encodeHighway(hw.Sum(nil))
}

// wantDigest is the digest a read checks its chunks against.
type wantDigest struct {
	alg byte   // xfer.DigestSHA256 or xfer.DigestHighway
	sum []byte // nil: malformed (the check fails, naming bad)
	bad string // the malformed value, for the error
}

// chooseDigest picks the digest of an object's meta data: its
// HighwayHash-256 entry when it has one, else its SHA-256 digest.
func chooseDigest(info *jetstream.ObjectInfo) wantDigest {
	if v, ok := info.Metadata[metaDigestKey]; ok {
		sum, err := base64.URLEncoding.DecodeString(v)
		if err != nil || len(v) != highwayDigestLen || len(sum) != 32 {
			return wantDigest{alg: xfer.DigestHighway, bad: v}
		}
		return wantDigest{alg: xfer.DigestHighway, sum: sum}
	}
	if sum, err := jetstream.DecodeObjectDigest(info.Digest); err == nil && len(sum) == sha256.Size {
		return wantDigest{alg: xfer.DigestSHA256, sum: sum}
	}
	return wantDigest{alg: xfer.DigestSHA256, bad: info.Digest}
}

// malformed describes a digest that cannot be checked, or "" when it can.
func (w *wantDigest) malformed() string {
	if w.sum != nil {
		return ""
	}
	if w.alg == xfer.DigestHighway {
		return fmt.Sprintf("malformed %s digest %q in the metadata's %s entry", xfer.DigestName(w.alg), w.bad, metaDigestKey)
	}
	return fmt.Sprintf("malformed digest %q", w.bad)
}

// newHash returns a hash for the digest.
func (w *wantDigest) newHash() hash.Hash { return xfer.NewHash(w.alg) }
