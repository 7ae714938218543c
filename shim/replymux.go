package shim

import (
	"context"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/claimops"
	"github.com/natssend/natssend/internal/connlimit"
)

// replyMux is a connection's reply inbox for every call of a Client:
// nats.go's request is not used, since its reply subjects are predictable
// (a math/rand stream seeded with the clock, 47 bits a subject), and a
// reply subject that an outsider can predict lets it answer in the
// responder's place or make a responder answer another caller's request
// into this caller's inbox. Every attempt of one call answers to the same
// token (a reply to any attempt answers the call), and a claim-checked
// reply that arrives after its call gave up is deleted instead of being
// left in the bucket until its TTL. One wildcard subscription serves every
// call on the connection; a goroutine per connection watches for lost
// links so that waiting calls learn of them at once.
//
// A call's reply subject is prefix + token + "." + attempt, its token
// 96 random bits (math/rand/v2's ChaCha8, seeded from the system's
// entropy) and a tag (see issued).
//
// A refused subscription (see connlimit.State.RefusedSub) is made again,
// under a new prefix, by the next call, which waits one round trip for
// the server's verdict before it sends: a permission granted again (a
// configuration reload) works from the next call on, one still denied
// fails that call before anything is sent.
type replyMux struct {
	nc  *nats.Conn
	st  *connlimit.State
	tag maphash.Seed // see issued

	cur   atomic.Pointer[muxSub] // the subscription in use; nil: none, or refused
	last  atomic.Pointer[muxSub] // the newest subscription made, refused or not
	subMu sync.Mutex             // held while (re)subscribing
	// listening: refused is a watcher of the connection's denials;
	// guarded by subMu.
	listening bool

	mu      sync.Mutex
	calls   map[string]*muxCall
	lost    chan struct{} // closed when the link is lost; then replaced
	lostErr error
	closed  chan struct{} // closed when the connection is closed
	swept   time.Time
	stores  []*claimcheck.Store // the stores of the calls made, newest last (at most maxMuxStores)
}

// muxSub is one subscription of a replyMux.
type muxSub struct {
	sub    *nats.Subscription
	prefix string // the reply subjects' prefix, with its trailing dot
	subj   string // the subscription's subject: prefix + ">"
}

// maxMuxStores bounds replyMux.stores: a connection's calls use a Client's
// store or a few.
const maxMuxStores = 8

// muxCall is one call's registration.
type muxCall struct {
	ch    chan muxReply
	store *claimcheck.Store // deletes late claim-checked replies; nil: none can come
	key   string            // the call's reply key: names its claim-checked replies
	until time.Time         // after the call ended: how long late replies are watched for
	ended bool
	got   uint64 // attempts 1 to 64 whose reply arrived, one bit each
}

// muxReply is a reply and the attempt it answers.
type muxReply struct {
	msg     *nats.Msg
	attempt int
}

// muxKey is the key of a connection's replyMux in its connlimit.State.
type muxKey struct{}

// lateReplyGrace is how long after its call's deadline a late reply is
// still watched for: the responder measures the deadline from when it
// starts (HeaderTimeout), so it can answer after the caller's deadline.
const lateReplyGrace = 5 * time.Second

// muxFor returns the connection's replyMux, subscribing on first use and
// again after the server refused its subscription (see replyMux).
func muxFor(st *connlimit.State) (*replyMux, error) {
	m := st.Attach(muxKey{}, func() any {
		return &replyMux{nc: st.Conn(), st: st, tag: maphash.MakeSeed(), calls: map[string]*muxCall{},
			lost: make(chan struct{}), closed: make(chan struct{})}
	}).(*replyMux)
	if m.cur.Load() != nil {
		return m, nil
	}
	_, err := m.subscribe()
	return m, err
}

// current returns the subscription in use, making it when there is none.
func (m *replyMux) current() (*muxSub, error) {
	if cur := m.cur.Load(); cur != nil {
		return cur, nil
	}
	return m.subscribe()
}

// subscribe makes the mux's subscription. After a refusal it waits one
// round trip for the server's verdict on the new one (connlimit's
// Subscribe): a refusal is returned, nothing is sent.
func (m *replyMux) subscribe() (*muxSub, error) {
	m.subMu.Lock()
	defer m.subMu.Unlock()
	if cur := m.cur.Load(); cur != nil {
		return cur, nil
	}
	prev := m.last.Load()
	if prev == nil && !m.listening {
		// Before the first subscription, so that no refusal of it is
		// missed; it lasts as long as the connection, as the mux does.
		m.listening = true
		_ = m.st.Listen(m.refused)
	}
	prefix := m.nc.NewInbox() + "."
	mk := func() (*nats.Subscription, error) { return m.nc.Subscribe(prefix+">", m.handle) }
	var sub *nats.Subscription
	var err error
	if prev != nil {
		sub, err = m.st.Subscribe(connlimit.DefaultFlushTimeout, mk)
	} else {
		sub, err = mk()
	}
	if err != nil {
		return nil, err
	}
	if prev != nil {
		_ = prev.sub.Unsubscribe() // refused: nats.go would keep it, and send it again at a reconnect
	}
	if prev == nil {
		status := m.nc.StatusChanged(nats.DISCONNECTED, nats.CLOSED)
		go m.watch(status)
	}
	cur := &muxSub{sub: sub, prefix: prefix, subj: prefix + ">"}
	m.last.Store(cur)
	m.cur.Store(cur)
	if m.st.RefusedSub(cur.subj) != nil {
		// Refused before it was in use (refused saw nothing to drop).
		m.cur.CompareAndSwap(cur, nil)
	}
	return cur, nil
}

// refused drops the subscription in use when the server refused it: the
// next call makes another (see replyMux). Calls waiting on it end by their
// own watches (connlimit.State.Watch).
func (m *replyMux) refused(d *connlimit.Denial) {
	if cur := m.cur.Load(); cur != nil && d.Op == "subscribe" && d.Queue == "" && d.Subject == cur.subj {
		m.cur.CompareAndSwap(cur, nil)
	}
}

// watch fails the waits of every call when the link is lost.
func (m *replyMux) watch(status chan nats.Status) {
	for s := range status {
		err := nats.ErrDisconnected
		if s == nats.CLOSED {
			err = nats.ErrConnectionClosed
		}
		m.mu.Lock()
		m.lostErr = err
		close(m.lost)
		m.lost = make(chan struct{})
		if s == nats.CLOSED {
			close(m.closed)
		}
		m.mu.Unlock()
		if s == nats.CLOSED {
			m.nc.RemoveStatusListener(status)
			return
		}
	}
}

// register starts a call; store deletes claim-checked replies that arrive
// after the call ended (nil when the call cannot get any).
func (m *replyMux) register(store *claimcheck.Store) (string, *muxCall) {
	c := &muxCall{ch: make(chan muxReply, 4), store: store}
	var sb strings.Builder
	sb.Grow(tokenLen)
	m.writeToken(&sb)
	token := sb.String()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls[token] = c
	if store != nil && !slices.Contains(m.stores, store) {
		if len(m.stores) == maxMuxStores {
			m.stores = slices.Delete(m.stores, 0, 1)
		}
		m.stores = append(m.stores, store)
	}
	if now := time.Now(); now.Sub(m.swept) > time.Second {
		m.swept = now
		for k, v := range m.calls {
			if v.ended && now.After(v.until) {
				delete(m.calls, k)
			}
		}
	}
	return token, c
}

// subject is the reply subject of one attempt of a call.
func (m *replyMux) subject(token string, attempt int) string {
	return m.prefixNow() + token + "." + strconv.Itoa(attempt)
}

// prefixNow is the prefix of the subscription in use, made again if it
// was refused (or, when that fails, the refused one's: the call's watch
// has ended it).
func (m *replyMux) prefixNow() string {
	cur, err := m.current()
	if err != nil {
		cur = m.last.Load()
	}
	return cur.prefix
}

// subj is the subject of the subscription in use, the one a call needs
// (see connlimit.State.Watch); "" before the first.
func (m *replyMux) subj() string {
	if cur := m.last.Load(); cur != nil {
		return cur.subj
	}
	return ""
}

// lostLink returns the channel closed at the next loss of the link.
func (m *replyMux) lostLink() (chan struct{}, func() error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ch := m.lost
	return ch, func() error {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.lostErr
	}
}

// end ends a call. With a store, the call stays registered until its
// deadline plus lateReplyGrace, so that a claim-checked reply that still
// comes (to an attempt that was not waited for, or after the caller gave
// up) is deleted.
//
// A reply to an attempt that never arrived may still have been stored (the
// reference was lost on the way: the caller's link dropped); its payload
// is stored under claimops.ReplyObjectName of the attempt's reply
// subject, so end deletes those names once the responder's deadline has
// passed (until). attempts is how many attempts the call made.
func (m *replyMux) end(token string, c *muxCall, deadline time.Time, attempts int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.store == nil {
		delete(m.calls, token)
		return
	}
	c.ended, c.until = true, deadline.Add(lateReplyGrace)
	var missing []string
	for a := 1; a <= attempts; a++ {
		if a > 64 || c.got&(1<<(a-1)) == 0 {
			missing = append(missing, m.subject(token, a))
		}
	}
	if len(missing) > 0 {
		store := c.store
		time.AfterFunc(time.Until(c.until), func() {
			for _, subj := range missing {
				ref := &nats.Msg{Subject: subj, Header: nats.Header{claimcheck.HeaderRef: {claimops.ReplyObjectName(c.key, subj)}}}
				_ = store.Discard(context.Background(), ref) // nothing there: one look-up
			}
		})
	}
	// Replies that came while the call was busy with another one.
	for {
		select {
		case r := <-c.ch:
			m.discardLate(c, r.msg)
		default:
			return
		}
	}
}

// discardLate deletes the payload of a claim-checked reply nobody reads.
func (m *replyMux) discardLate(c *muxCall, msg *nats.Msg) {
	if c.store != nil && claimcheck.IsClaimCheck(msg) {
		// The caller owns it: nobody else deletes it before the TTL.
		go func() { _ = c.store.Discard(context.Background(), msg) }()
	}
}

// handle routes a reply to its call, and deletes the payload of a
// claim-checked reply whose call has ended.
func (m *replyMux) handle(msg *nats.Msg) {
	if msg.Sub == nil {
		return
	}
	rest, ok := strings.CutPrefix(msg.Subject, strings.TrimSuffix(msg.Sub.Subject, ">"))
	if !ok {
		return
	}
	token, n, _ := strings.Cut(rest, ".")
	attempt, _ := strconv.Atoi(n)
	m.mu.Lock()
	c := m.calls[token]
	if c != nil && attempt >= 1 && attempt <= 64 {
		c.got |= 1 << (attempt - 1)
	}
	if c != nil && !c.ended {
		// Under the lock, so that end cannot miss it.
		select {
		case c.ch <- muxReply{msg, attempt}:
			m.mu.Unlock()
			return
		default: // more replies than the call reads: it has one already
		}
	}
	var stores []*claimcheck.Store
	if c == nil && claimcheck.IsClaimCheck(msg) && m.issued(token) {
		// A call that ended so long ago that it is no longer registered
		// (a backlogged responder answers long after the deadline): the
		// payload is still the caller's to delete, with whichever store
		// holds it (Discard checks that it was stored for this subject).
		stores = slices.Clone(m.stores)
	}
	m.mu.Unlock()
	if c != nil {
		m.discardLate(c, msg)
	}
	if len(stores) > 0 {
		go func() {
			for _, st := range stores {
				_ = st.Discard(context.Background(), msg) // not there: one look-up
			}
		}()
	}
}
