package connlimit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/nats-io/nats.go"
)

// DefaultFlushTimeout bounds the round trip that confirms a connection's
// limit. Each caller's own context bounds its wait for it.
const DefaultFlushTimeout = 5 * time.Second

// ErrNoLimit is returned by State.Limit for a connection made by
// shim.Connect whose server, after a completed round trip, has still not
// announced the connection's max_payload (a server older than the ones
// this mechanism relies on, see sendsConnectInfo). Nothing is sent: the
// connection's limit is unknown, and nats.go refuses every non-empty
// message on it.
var ErrNoLimit = errors.New("natssend: the server has not announced this connection's max_payload after a round trip (server too old?); not sent")

// State is the one limit state of one connection, shared by every natssend
// sender on it (shim.Client, shim.Publish*, claimcheck.Store, the reply
// helpers). Get it with For.
type State struct {
	nc *nats.Conn
	d  *Dialer // nil: nc was not made by shim.Connect

	// verified is, for a connection whose first INFO was not rewritten,
	// its reconnect count plus one at the last confirmed round trip.
	verified atomic.Uint64

	mu     sync.Mutex
	flight *flight // the round trip in progress, shared by every caller

	attach sync.Map // key -> value, see Attach

	redecided  atomic.Int64 // see Redecided
	roundTrips atomic.Int64 // round trips made by confirm

	beforeSend atomic.Pointer[func()] // see SetBeforeSend

	pathCap atomic.Int64 // see SetPathCap; 0: none

	denied denials // see WatchDenied

	respOnce sync.Once // see RespInbox
	respSub  string
}

// SetPathCap sets the smallest max_payload on the path the connection's
// messages travel (a leafnode to a site with a lower limit, say), n > 0:
// from now on Limit is at most n, and Exact leaves every decision to
// Send, since nats.go's own check knows only the connection's limit. A
// later call replaces the cap.
func (s *State) SetPathCap(n int64) { s.pathCap.Store(n) }

// PathCap returns the cap set with SetPathCap, 0 when none.
func (s *State) PathCap() int64 { return s.pathCap.Load() }

// capped returns limit lowered to the path cap.
func (s *State) capped(limit int64) int64 {
	if c := s.pathCap.Load(); c > 0 && c < limit {
		return c
	}
	return limit
}

// BeforeSend is called by every sender between its decision and its send.
// It does nothing unless a test set a hook with SetBeforeSend.
func (s *State) BeforeSend() {
	if f := s.beforeSend.Load(); f != nil {
		(*f)()
	}
}

// SetBeforeSend sets a function that BeforeSend calls (nil removes it).
// It exists for tests that need a reconnect to fall exactly between a
// sender's decision and its send.
func (s *State) SetBeforeSend(f func()) {
	if f == nil {
		s.beforeSend.Store(nil)
		return
	}
	s.beforeSend.Store(&f)
}

// Link identifies the connection's current link on a guarded connection
// (see Guarded): it changes with every dial. Senders that let nats.go's
// own check decide read it before the send, to tell a refusal because the
// link changed (a decision taken again) from one because the message is
// too large. It is 0 on a connection that is not guarded.
func (s *State) Link() uint64 {
	if s.d == nil {
		return 0
	}
	return s.d.dials.Load()
}

// Redecided records that nats.go refused a message with nats.ErrMaxPayload
// after the sender's decision said it fits: the link changed in between,
// nothing was written, and the sender decides again.
func (s *State) Redecided() { s.redecided.Add(1) }

// Redecisions returns how often Redecided was called (for tests and
// measurements).
func (s *State) Redecisions() int64 { return s.redecided.Load() }

type flight struct {
	gen  uint64 // the link the round trip was started on
	done chan struct{}
	err  error
}

// registry maps connections to their State. It is the package-level state
// natssend documents (shim's package doc): senders that take a *nats.Conn
// (shim.Publish(nc, ...), a Store, a Client) must find the same State for
// the same connection. Entries of closed connections are dropped whenever
// an entry is added.
var registry struct {
	m     sync.Map // *nats.Conn -> *State
	sweep sync.Mutex
}

// last is the State For returned most recently: a service usually sends
// on one connection, and this spares the registry look-up per message
// (it showed in the publish path's profile). It may keep one closed
// connection's State alive until another connection is used.
var last unsafe.Pointer // *State, read and written atomically

// For returns the State of nc, creating it on first use. nc must not be
// nil.
func For(nc *nats.Conn) *State {
	if st := (*State)(atomic.LoadPointer(&last)); st != nil && st.nc == nc {
		// Inlined into the sender: one load and compare, at exactly the
		// inlining budget (shim's TestHotPathInlines guards it).
		return st
	}
	return forSlow(nc)
}

// forSlow is For past its one-entry cache.
func forSlow(nc *nats.Conn) *State {
	if st, ok := registry.m.Load(nc); ok {
		atomic.StorePointer(&last, unsafe.Pointer(st.(*State)))
		return st.(*State)
	}
	registry.sweep.Lock()
	defer registry.sweep.Unlock()
	registry.m.Range(func(k, _ any) bool {
		if k.(*nats.Conn).IsClosed() {
			registry.m.Delete(k)
		}
		return true
	})
	st := &State{nc: nc}
	// nats.go does not change a connection's options after Connect.
	if d, ok := nc.Opts.CustomDialer.(*Dialer); ok && nc.Opts.InProcessServer == nil {
		st.d = d
	}
	got, _ := registry.m.LoadOrStore(nc, st)
	return got.(*State)
}

// Size returns the number of connections with a State (for tests).
func Size() int {
	n := 0
	registry.m.Range(func(_, _ any) bool { n++; return true })
	return n
}

// Conn returns the connection.
func (s *State) Conn() *nats.Conn { return s.nc }

// Guarded reports whether nats.go's own size check on the connection's
// current link is exact: the connection was made by shim.Connect and its
// first INFO was rewritten, so nats.go holds either 0 (refusing every
// non-empty message until the connection's limit arrives) or the limit the
// server enforces on this connection. When it is false (a connection not
// made by shim.Connect, a TLS-handshake-first or websocket connection, an
// old server), the limit is confirmed by a round trip after each
// reconnect, which leaves a window right after a reconnect.
func (s *State) Guarded() bool { return s.d != nil && s.d.guarded() }

// Limit returns the connection's effective max_payload (the minimum of
// server, account and user limits, and the path cap: SetPathCap) for its
// current link.
//
// On a guarded connection it is the limit nats.go holds, once the server
// has announced it; before that (a moment after each connect and
// reconnect) Limit waits for one round trip, shared with every other
// caller on the connection. Otherwise it makes one round trip after each
// reconnect. Either way a message that passes nats.go's own check on a
// guarded connection fits the server's limit.
//
// Errors: nats.ErrConnectionClosed, nats.ErrConnectionReconnecting,
// ErrNoLimit, ctx's error, or the round trip's error. Nothing but a PING
// was sent.
func (s *State) Limit(ctx context.Context) (int64, error) {
	limit, err := s.linkLimit(ctx)
	if err != nil {
		return 0, err
	}
	return s.capped(limit), nil
}

// Current returns the connection's limit (the path cap included) without
// waiting, and false when it is not known at this moment: the connection
// is not connected, or, right after a (re)connect, the limit nats.go holds
// may still be the new link's placeholder (or the previous link's) rather
// than the one the server announced for it. Limit waits instead.
func (s *State) Current() (int64, bool) {
	nc := s.nc
	if !nc.IsConnected() {
		return 0, false
	}
	if s.Guarded() {
		link := s.d.dials.Load()
		if mp := nc.MaxPayload(); mp > 0 && s.d.dials.Load() == link && (mp != s.d.place.Load() || s.d.confirmed.Load() == link) {
			return s.capped(mp), true
		}
		return 0, false
	}
	if s.verified.Load() == nc.Stats().Reconnects+1 {
		if mp := nc.MaxPayload(); mp > 0 {
			return s.capped(mp), true
		}
	}
	return 0, false
}

// linkLimit is Limit without the path cap: the limit the server enforces
// on the connection's current link.
func (s *State) linkLimit(ctx context.Context) (int64, error) {
	nc := s.nc
	for {
		if !nc.IsConnected() {
			if nc.IsClosed() {
				return 0, nats.ErrConnectionClosed
			}
			// Reconnecting, or connecting for the first time.
			return 0, nats.ErrConnectionReconnecting
		}
		guarded := s.Guarded()
		var link uint64
		if guarded {
			// The fast path: the limit nats.go holds is the link's own,
			// unless it is still the placeholder of the newest link. The
			// link is read again after it: MaxPayload waits for nats.go's
			// lock, which a reconnect holds while it dials the next link.
			link = s.d.dials.Load()
			if mp := nc.MaxPayload(); mp > 0 && s.d.dials.Load() == link && (mp != s.d.place.Load() || s.d.confirmed.Load() == link) {
				s.d.observe(mp)
				return mp, nil
			}
		}
		gen := nc.Stats().Reconnects + 1
		if !guarded && s.verified.Load() == gen {
			return nc.MaxPayload(), nil
		}
		if err := s.confirm(ctx, gen); err != nil {
			return 0, err
		}
		mp := nc.MaxPayload()
		if !guarded {
			// The generation read before the round trip: a reconnect
			// during it makes the next call confirm again.
			s.verified.Store(gen)
			return mp, nil
		}
		sameLink := nc.Stats().Reconnects+1 == gen && s.d.dials.Load() == link && nc.IsConnected() && s.Guarded()
		if mp > 0 {
			if sameLink {
				// Confirmed, even if it equals the placeholder.
				s.d.confirmed.Store(link)
				s.d.observe(mp)
			}
			return mp, nil
		}
		if sameLink {
			return 0, ErrNoLimit
		}
		// Reconnected during the round trip: confirm the new link.
	}
}

// confirm waits for one PING/PONG round trip on link gen: the INFO the
// server sent before its PONG has been processed when it returns (every
// PING on a link follows the handshake's, so its PONG follows the INFO
// that the server sends after the handshake's PONG). Concurrent callers on
// the same link share the round trip.
func (s *State) confirm(ctx context.Context, gen uint64) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	f := s.flight
	if f == nil || f.gen != gen {
		f = &flight{gen: gen, done: make(chan struct{})}
		s.flight = f
		go s.fly(f)
	}
	s.mu.Unlock()
	select {
	case <-f.done:
		if f.err != nil {
			return fmt.Errorf("natssend: confirming the connection's max_payload: %w", f.err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *State) fly(f *flight) {
	s.roundTrips.Add(1)
	f.err = s.nc.FlushTimeout(DefaultFlushTimeout)
	s.mu.Lock()
	if s.flight == f {
		s.flight = nil
	}
	s.mu.Unlock()
	close(f.done)
}

// Attach returns the value attached to the State under key, calling mk to
// make it on first use. Packages use it to keep per-connection state next
// to the limit (shim keeps its lazily made claim check store there).
func (s *State) Attach(key any, mk func() any) any {
	if v, ok := s.attach.Load(key); ok {
		return v
	}
	v, _ := s.attach.LoadOrStore(key, mk())
	return v
}
