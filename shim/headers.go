package shim

import (
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
)

// requestHeader returns the header map of a request: the client's static
// headers, then the request's own (replacing a static one of the same
// key), then extra (the timeout and operation ID headers, which replace
// anything of the same key). The caller's maps are not modified. replyKey
// is the call's reply key (see newReplyKey; "" for none), sent in the
// accept header of a Client with claim checks.
//
// HeaderAcceptClaimCheck and HeaderMaxPayload are the Client's to set:
// the first says the caller can read a claim-checked reply, which only a
// Client with WithClaimChecks can, and what its connection accepts; the
// second says the latter for a Client without. Whatever the request
// carries under those keys (a header forwarded from an incoming request,
// or set by hand) is dropped, and the Client sends its own (see
// acceptValue), with the limit of the moment: it may change with a
// reconnect, and one not known yet is not sent.
func (c *Client) requestHeader(replyKey string, own nats.Header, extra ...string) nats.Header {
	h := make(nats.Header, len(c.static)+len(own)+len(extra)/2+1)
	for k, v := range c.static {
		h[k] = v
	}
	for k, v := range own {
		if isAcceptKey(k) || isMaxPayloadKey(k) {
			continue
		}
		h[k] = v
	}
	if c.store != nil {
		h[HeaderAcceptClaimCheck] = []string{acceptValue(c.store, c.st, replyKey)}
	} else if lim := c.limitText(); lim != "" {
		h[HeaderMaxPayload] = []string{lim}
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

// isMaxPayloadKey reports whether k names HeaderMaxPayload in any case.
func isMaxPayloadKey(k string) bool {
	return len(k) == len(HeaderMaxPayload) && strings.EqualFold(k, HeaderMaxPayload)
}

// limitText is the connection's limit of the moment as HeaderMaxPayload's
// value, "" while it is not known (see acceptValue). The text of the last
// limit is kept: it rarely changes.
func (c *Client) limitText() string {
	limit := c.announcedLimit()
	if limit < 0 {
		return ""
	}
	if t := c.limText.Load(); t != nil && t.n == limit {
		return t.s
	}
	t := &limitString{n: limit, s: strconv.FormatInt(limit, 10)}
	c.limText.Store(t)
	return t.s
}

// limitString is a limit and its decimal text.
type limitString struct {
	n int64
	s string
}

// fixStatic makes the client's static headers carry HeaderAcceptClaimCheck
// exactly when the client can honour it (WithClaimChecks), and never
// HeaderMaxPayload, whatever WithHeader added under those keys.
func (c *Client) fixStatic() {
	for k := range c.static {
		if isAcceptKey(k) || isMaxPayloadKey(k) {
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
