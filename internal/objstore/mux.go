package objstore

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/wire"
)

// mux is one wildcard inbox subscription that routes the replies of many
// batch requests to their flights by the inbox's last token, so that a
// read subscribes nothing of its own. A reply whose flight has ended (a
// batch given up and asked for again under a new token) is dropped. The
// subscription is made when a flight needs it and removed once no flight
// has needed it for muxLinger, so an idle reader leaves nothing on the
// connection.
type mux struct {
	nc   *nats.Conn
	drop atomic.Pointer[func(*nats.Msg) bool] // a fault test's loss of replies

	// What the connection has delivered, for the stall rule (see
	// flight.lost): the bytes routed (data and replyOverhead per reply),
	// and when the last reply was routed (Unix nanoseconds).
	received atomic.Uint64
	lastAt   atomic.Int64

	mu      sync.Mutex
	sub     *nats.Subscription
	prefix  string // the inbox prefix, with its trailing dot
	flights map[string]*flight
	idle    *time.Timer // removes the subscription, while no flight is open
}

// muxLinger is how long the inbox subscription outlives the last flight.
const muxLinger = time.Second

// flight is one batch request's reply inbox.
type flight struct {
	m      *mux
	token  string
	ch     chan *nats.Msg // capacity: every reply the request can have
	budget *Budget
	held   int64 // budget bytes not yet given back
	closed bool
	// attempt counts the stalls of the range before this request (see
	// Reader.attempt): each makes the stall rule wait longer.
	attempt int

	// Under m.mu: the flight's last progress (its request, or its latest
	// reply), the connection's received bytes then, and the bytes the
	// connection was owed then, its own included (see flight.lost).
	progressAt time.Time
	mark       uint64
	owed       int64
}

// open registers a flight with room for n replies, holding held bytes of
// b until its replies arrive or it is closed. It subscribes the inbox on
// first use.
func (m *mux) open(n int, b *Budget, held int64) (*flight, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sub == nil {
		prefix := m.nc.NewInbox() + "."
		sub, err := m.nc.Subscribe(prefix+"*", m.route)
		if err != nil {
			return nil, "", err
		}
		// The bytes in flight are bounded by the Budget and each
		// flight's channel holds all its replies: nats.go's own limits
		// would only drop chunks.
		_ = sub.SetPendingLimits(-1, -1)
		m.sub, m.prefix = sub, prefix
	}
	if m.idle != nil {
		m.idle.Stop()
		m.idle = nil
	}
	f := &flight{m: m, token: flightToken(), ch: make(chan *nats.Msg, n), budget: b, held: held}
	for m.flights[f.token] != nil {
		f.token = flightToken()
	}
	f.progressAt, f.mark, f.owed = time.Now(), m.received.Load(), b.Used()
	m.flights[f.token] = f
	return f, m.prefix + f.token, nil
}

// flightToken returns a batch request's reply token: 96 random bits
// (wire.RandomToken), so that nobody who saw the inbox of one read can aim
// forged chunks at the next (a counter would let a peer allowed to publish
// to inboxes make another reader's read fail its digest check).
func flightToken() string {
	var b [16]byte
	wire.RandomToken(b[:])
	return string(b[:])
}

// route hands a reply to its flight and gives the flight's budget back
// as its bytes arrive.
func (m *mux) route(msg *nats.Msg) {
	m.mu.Lock()
	defer m.mu.Unlock()
	token, ok := strings.CutPrefix(msg.Subject, m.prefix)
	if !ok || m.prefix == "" {
		return
	}
	size := uint64(len(msg.Data) + replyOverhead)
	m.received.Add(size)
	now := time.Now()
	m.lastAt.Store(now.UnixNano())
	f := m.flights[token]
	if f == nil {
		return
	}
	if f.held > 0 {
		n := min(f.held, int64(size))
		f.held -= n
		f.budget.Delivered(n)
	}
	if f.closed {
		// Abandoned while its replies were on their way (see close): it
		// only gives its budget back as they arrive, until its last.
		if f.held == 0 || msg.Header.Get(hdrStatus) != "" {
			m.forget(f)
		}
		return
	}
	if drop := m.drop.Load(); drop != nil && (*drop)(msg) {
		return
	}
	f.progressAt, f.mark, f.owed = now, m.received.Load(), f.budget.Used()
	select {
	case f.ch <- msg:
	default:
		// More replies than the request can have: the chain check
		// reports the batch incomplete, and it is asked for again.
	}
}

// close ends the flight: later replies are dropped. With done (every
// reply the request can have arrived, or its end), the budget it still
// holds is given back at once. Otherwise (a batch given up as stalled, a
// broken chain, a read cancelled) its replies may still be on their way,
// taking their place on the connection: unless the connection has gone
// quiet, the flight keeps its budget and gives it back as they arrive,
// so that a request asked again meanwhile waits for room instead of
// adding to what is owed. It lets go at its last reply, once nothing
// arrives on the connection for abandonQuiet, or after abandonLinger.
func (f *flight) close(done bool) {
	m := f.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if f.closed {
		return
	}
	f.closed = true
	if done || f.held == 0 || m.flights[f.token] != f || m.quietLocked(f.progressAt, abandonQuiet) {
		m.forget(f)
		return
	}
	closedAt := time.Now()
	var check func()
	check = func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.flights[f.token] != f {
			return
		}
		if m.quietLocked(closedAt, abandonQuiet) || time.Since(closedAt) >= abandonLinger {
			m.forget(f)
			return
		}
		time.AfterFunc(closedPoll, check)
	}
	time.AfterFunc(closedPoll, check)
}

// An abandoned flight (see close) holds its budget while the connection
// receives, for at most abandonLinger.
const (
	abandonQuiet  = 2 * closedPoll
	abandonLinger = 5 * time.Second
)

// quietLocked reports whether nothing arrived on the inbox since since
// (or since the last reply, whichever is later) for d, and nothing waits
// there to be routed; m.mu is held.
func (m *mux) quietLocked(since time.Time, d time.Duration) bool {
	last := since
	if at := m.lastAt.Load(); at > last.UnixNano() {
		last = time.Unix(0, at)
	}
	return time.Since(last) >= d && m.pendingLocked() == 0
}

// forget removes the closed flight f and gives back the budget it still
// holds; m.mu is held. The inbox subscription goes muxLinger after the
// last flight.
func (m *mux) forget(f *flight) {
	if m.flights[f.token] == f {
		delete(m.flights, f.token)
	}
	f.budget.Release(f.held)
	f.held = 0
	if len(m.flights) == 0 && m.sub != nil && m.idle == nil {
		sub := m.sub
		m.idle = time.AfterFunc(muxLinger, func() { m.unsubscribe(sub) })
	}
}

// unsubscribe removes sub, the inbox subscription, unless a flight has
// opened since the timer was set.
func (m *mux) unsubscribe(sub *nats.Subscription) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sub != sub || len(m.flights) > 0 {
		return
	}
	_ = sub.Unsubscribe()
	m.sub, m.prefix, m.idle = nil, "", nil
}

// replyOverhead is what the budget counts for a reply besides its data:
// the headers a direct get adds (stream, subject, sequence, time stamp,
// pending, last sequence) and the subject, which the server counts
// against max_bytes too.
const replyOverhead = 256
