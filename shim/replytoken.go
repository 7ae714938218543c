package shim

import (
	"context"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/callerr"
	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/wire"
)

// Reply subjects that nobody can predict: a Client's calls answer to
// subjects with a random token of 96 bits (replyMux) or to an inbox of
// their own with a random last token of 132 bits (randomInbox), never to a
// counter or a NUID, whose next value an observer of a few can tell.

// tokenLen is the length of a call's token: 16 characters of 6 random
// bits each, then 4 of a tag (see issued).
const tokenLen = 20

// writeToken writes a new token to sb: 96 bits of math/rand/v2's
// top-level generator (ChaCha8, seeded from the system's entropy, per
// thread: unpredictable from any number of earlier tokens), then a tag of
// 24 bits keyed by the mux's random seed (see issued). Tokens share no
// counter: an observer of every reply subject of the connection learns
// nothing of the next.
func (m *replyMux) writeToken(sb *strings.Builder) {
	var b [tokenLen]byte
	wire.RandomToken(b[:16])
	m.tagToken(&b)
	sb.Write(b[:])
}

// tagToken sets the last 4 characters of b from its first 16 and the
// mux's secret seed.
func (m *replyMux) tagToken(b *[tokenLen]byte) {
	h := maphash.Bytes(m.tag, b[:16])
	for i := 16; i < tokenLen; i++ {
		b[i] = wire.TokenChars[h&63]
		h >>= 6
	}
}

// issued reports whether token is one this mux gave out: its tag is the
// one tagToken makes (a reply to anything else is not looked up). It
// filters strangers' messages (maphash is no MAC); what makes deleting a
// late reply safe is Discard's own check that the payload was stored for
// the subject.
func (m *replyMux) issued(token string) bool {
	if len(token) != tokenLen {
		return false
	}
	var b [tokenLen]byte
	copy(b[:], token)
	m.tagToken(&b)
	return string(b[:]) == token
}

// fastCalls recycles the registrations of single requests (request).
var fastCalls = sync.Pool{New: func() any { return &muxCall{ch: make(chan muxReply, 1)} }}

// muxRequest sends req (its Reply is set here) on the Client's
// connection through the connection's replyMux and waits for one reply
// until ctx ends: nats.go's RequestMsgWithContext with an unguessable
// reply subject, for Client.send. A reply that is the server's
// no-responders status is nats.ErrNoResponders; a closed connection
// nats.ErrConnectionClosed. When ctx has ended already or the mux's
// subscription cannot be made, the error wraps connlimit.ErrNotSent:
// nothing was sent.
func (c *Client) muxRequest(ctx context.Context, req *nats.Msg) (*nats.Msg, error) {
	if err := ctx.Err(); err != nil {
		// Ended before the send (a watch that found the reply's
		// subscription refused): not subscribed again, not sent.
		return nil, fmt.Errorf("%w: %w", connlimit.ErrNotSent, err)
	}
	m, err := muxFor(c.st)
	var cur *muxSub
	if err == nil {
		cur, err = m.current()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", connlimit.ErrNotSent, err)
	}
	var sb strings.Builder
	sb.Grow(len(cur.prefix) + tokenLen + 2)
	sb.WriteString(cur.prefix)
	m.writeToken(&sb)
	sb.WriteString(".1")
	req.Reply = sb.String()
	token := req.Reply[len(cur.prefix) : len(cur.prefix)+tokenLen]
	mc := fastCalls.Get().(*muxCall)
	m.mu.Lock()
	m.calls[token] = mc
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.calls, token)
		m.mu.Unlock()
		select { // no reply is sent to it once it is out of the map
		case <-mc.ch:
		default:
		}
		mc.got = 0
		fastCalls.Put(mc)
	}()
	if err := m.nc.PublishMsg(req); err != nil {
		return nil, err
	}
	select {
	case r := <-mc.ch:
		if callerr.IsNoResponders(r.msg) {
			return nil, nats.ErrNoResponders
		}
		return r.msg, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-m.closed:
		return nil, nats.ErrConnectionClosed
	}
}

// randomInbox returns a new inbox under nc's inbox prefix whose last token
// is 132 random bits (math/rand/v2's ChaCha8, seeded from the system's
// entropy): unlike nats.go's NewInbox (a NUID, whose sequence goes up by
// small steps), no inbox of the connection tells anything of the next, so
// nobody can aim a request's reply, or a responder's, at a call's inbox
// before seeing it.
func randomInbox(nc *nats.Conn) string {
	prefix := strings.TrimSuffix(nc.Opts.InboxPrefix, ".")
	if prefix == "" {
		prefix = nats.InboxPrefix[:len(nats.InboxPrefix)-1]
	}
	var b [22]byte
	wire.RandomToken(b[:])
	return prefix + "." + string(b[:])
}
