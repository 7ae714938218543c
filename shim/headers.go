package shim

import (
	"strings"

	"github.com/nats-io/nats.go"
)

// requestHeader returns the header map of a request: the client's static
// headers, then the request's own (replacing a static one of the same
// key), then extra (the timeout and operation ID headers, which replace
// anything of the same key). The caller's maps are not modified.
//
// HeaderAcceptClaimCheck is the Client's to set: it says the caller can
// read a claim-checked reply, which only a Client with WithClaimChecks
// can. Whatever the request carries under that key (a header forwarded
// from an incoming request, or set by hand) is dropped, and a Client with
// a store sends its own (see acceptValue).
func (c *Client) requestHeader(own nats.Header, extra ...string) nats.Header {
	h := make(nats.Header, len(c.static)+len(own)+len(extra)/2+1)
	for k, v := range c.static {
		h[k] = v
	}
	for k, v := range own {
		if isAcceptKey(k) {
			continue
		}
		h[k] = v
	}
	if c.store != nil {
		// The limit of the moment: it may change with a reconnect.
		h[HeaderAcceptClaimCheck] = []string{acceptValue(c.store, c.st)}
	}
	for i := 0; i+1 < len(extra); i += 2 {
		h[extra[i]] = []string{extra[i+1]}
	}
	return h
}

// isAcceptKey reports whether k names HeaderAcceptClaimCheck in any case
// (the receiver's nats.go canonicalizes header keys).
func isAcceptKey(k string) bool {
	return len(k) == len(HeaderAcceptClaimCheck) && strings.EqualFold(k, HeaderAcceptClaimCheck)
}

// fixStatic makes the client's static headers carry HeaderAcceptClaimCheck
// exactly when the client can honour it (WithClaimChecks), whatever
// WithHeader added under that key.
func (c *Client) fixStatic() {
	for k := range c.static {
		if isAcceptKey(k) {
			delete(c.static, k)
		}
	}
	if c.store != nil {
		if c.static == nil {
			c.static = nats.Header{}
		}
		c.static[HeaderAcceptClaimCheck] = []string{c.store.Bucket()}
	}
	if len(c.static) == 0 {
		c.static = nil
	}
}
