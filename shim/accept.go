package shim

import (
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/claimops"
	"github.com/natssend/natssend/internal/connlimit"
)

// The value of HeaderAcceptClaimCheck says where the caller's claim-check
// store is and what its connection accepts:
//
//	<bucket>[; domain=<JetStream domain>][; reads=<domain>,...][; max-payload=<bytes>][; reply-key=<32 hex digits>]
//
// reply-key is 128 random bits, new for every call (newReplyKey): a
// responder names a claim-checked reply's object after it and the reply
// subject (claimops.ReplyObjectName), so that the caller can delete the
// payload even if the reference never reaches it, while nobody who did
// not receive the request can predict the name (and store an object under
// it first, which would make the responder's reply fail). Without it a
// reply's object gets a random name. docs/protocol.md is the wire's spec.
//
// A responder stores a claim-checked reply where the caller can read it
// (a Store in the caller's JetStream domain, or in one of the other
// domains its Store may read, claimcheck.WithDomains, listed by reads: the
// caller reads any bucket there, the reference names it) and decides every reply against the
// smaller of its own limit and the caller's max-payload, so that a reply
// never reaches the caller's server above that server's limit (across a
// leafnode, one message over it closes the whole link). A value with only
// a bucket (an older caller) asks for that bucket.
type acceptance struct {
	bucket     string
	domain     string
	hasDomain  bool
	reads      []string // other domains the caller's Store reads
	maxPayload int64    // 0: not said
	replyKey   string   // names a claim-checked reply (see above); "": a random name
}

// acceptValue is the HeaderAcceptClaimCheck value of a Client with store
// on the connection whose limit state is st.
func acceptValue(store *claimcheck.Store, st *connlimit.State, replyKey string) string {
	v := store.Bucket() + "; domain=" + store.Domain()
	if replyKey != "" {
		v += "; reply-key=" + replyKey
	}
	if ds := claimops.For(store).Domains(); len(ds) > 0 {
		v += "; reads=" + strings.Join(ds, ",")
	}
	if st != nil {
		// Only a limit known for the current link: right after a reconnect
		// nats.go may hold a placeholder, which would make the responder
		// refuse replies the caller can take. Without it, the responder
		// decides against its own limit alone.
		if limit, ok := st.Current(); ok {
			v += "; max-payload=" + strconv.FormatInt(limit, 10)
		}
	}
	return v
}

// callerAccept reads what a request says of its caller: where its
// claim-check store is (HeaderAcceptClaimCheck) and what its connection
// accepts (the accept header's max-payload, or HeaderMaxPayload from a
// Client without claim checks).
func callerAccept(h nats.Header) acceptance {
	a := parseAccept(h.Get(HeaderAcceptClaimCheck))
	if a.maxPayload == 0 {
		a.maxPayload = parseLimit(h.Get(HeaderMaxPayload))
	}
	return a
}

// parseLimit reads a byte count: 0 when v is not a positive decimal.
func parseLimit(v string) int64 {
	if v == "" {
		return 0 // without the error ParseInt would allocate
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n > 0 {
		return n
	}
	return 0
}

// capTo returns limit lowered to the caller's max-payload, when the
// caller said one.
func (a acceptance) capTo(limit int64) int64 {
	if a.maxPayload > 0 && (limit <= 0 || a.maxPayload < limit) {
		return a.maxPayload
	}
	return limit
}

// parseAccept reads a HeaderAcceptClaimCheck value; parameters it does
// not know are ignored.
func parseAccept(v string) acceptance {
	if v == "" {
		return acceptance{} // most requests: every reply reads it
	}
	first, rest, _ := strings.Cut(v, ";")
	a := acceptance{bucket: strings.TrimSpace(first)}
	for rest != "" {
		var p string
		p, rest, _ = strings.Cut(rest, ";")
		k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok {
			continue
		}
		switch k {
		case "domain":
			a.domain, a.hasDomain = val, true
		case "reads":
			a.reads = strings.Split(val, ",")
		case "max-payload":
			a.maxPayload = parseLimit(val)
		case "reply-key":
			if validReplyKey(val) {
				a.replyKey = val
			}
		}
	}
	return a
}

// canRead reports whether the caller can read a claim check stored by
// store: it accepts claim checks, and store is in its JetStream domain or
// in one of the other domains it reads (any bucket there: the reference
// names it), or, for an older caller that names only a bucket, store uses
// that bucket.
func (a acceptance) canRead(store *claimcheck.Store) bool {
	switch {
	case a.bucket == "":
		return false
	case a.hasDomain:
		d := store.Domain()
		return d == a.domain || (d != "" && slices.Contains(a.reads, d))
	}
	return a.bucket == store.Bucket()
}
