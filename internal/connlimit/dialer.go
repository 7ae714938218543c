package connlimit

import (
	"net"
	"sync/atomic"

	"github.com/nats-io/nats.go"
)

// Dialer is the nats.CustomDialer that shim.Connect installs. It dials with
// the dialer the options chose (a CustomDialer of the user's, the
// deprecated nats.Dialer, or nats.go's default net.Dialer with the
// connection timeout) and wraps every connection so that its first INFO
// announces max_payload 0 (see infoConn). A Dialer may be used by one
// nats.Conn only.
type Dialer struct {
	inner   nats.CustomDialer
	skipTLS bool

	// Written while nats.go reads the first INFO of a new connection, under
	// its connection lock; read by State.
	kind      atomic.Int32 // resultKind of the newest connection, -1 before any
	serverMax atomic.Int64 // the server-wide max_payload it announced
	place     atomic.Int64 // the placeholder its rewritten INFO announced
	dials     atomic.Uint64

	// Read and written by State.
	floor     atomic.Int64  // the lowest limit confirmed on any link, 0 before any
	confirmed atomic.Uint64 // the newest link (dials) whose limit was confirmed
}

// PlaceholderFloor caps the placeholder limit that a reconnected link
// announces until the server's INFO with the link's own limit is parsed.
// It lets the small messages nats.go sends on its own right after a
// reconnect (a JetStream consumer's next pull request, acknowledgements)
// through, where 0 would fail them: a pull consumer would then wait for
// its missed-heartbeat timer, 30 s by default, after every reconnect.
const PlaceholderFloor = 4096

// placeholder is the max_payload a new link's first INFO announces: 0
// before any link's limit was confirmed (shim.Connect confirms the first
// one before it returns), then the least of the server-wide value, the
// lowest limit any earlier link had, and PlaceholderFloor. A message up to
// it can reach the server in the moment after a reconnect; it fits unless
// the new link's limit is lower than every earlier one and than 4 KiB.
func (d *Dialer) placeholder(serverMax int64) int64 {
	p := d.floor.Load()
	if p <= 0 {
		d.place.Store(0)
		return 0
	}
	p = min(p, PlaceholderFloor)
	if serverMax > 0 {
		p = min(p, serverMax)
	}
	d.place.Store(p)
	return p
}

// observe records a link's confirmed limit.
func (d *Dialer) observe(limit int64) {
	for {
		f := d.floor.Load()
		if f > 0 && f <= limit {
			return
		}
		if d.floor.CompareAndSwap(f, limit) {
			return
		}
	}
}

// skipTLSDialer is nats.go's optional CustomDialer interface.
type skipTLSDialer interface{ SkipTLSHandshake() bool }

// NewDialer returns a Dialer that dials the way o says (o's CustomDialer,
// else o's Dialer, else a net.Dialer with o's Timeout and MPTCP setting).
// Unlike nats.go's own dialer, it does not divide the timeout among the
// addresses a host name resolves to.
func NewDialer(o *nats.Options) *Dialer {
	d := &Dialer{}
	d.kind.Store(-1)
	switch {
	case o.CustomDialer != nil:
		d.inner = o.CustomDialer
		if sd, ok := o.CustomDialer.(skipTLSDialer); ok {
			d.skipTLS = sd.SkipTLSHandshake()
		}
	case o.Dialer != nil:
		nd := *o.Dialer
		d.inner = &nd
	default:
		timeout := o.Timeout
		if timeout == 0 {
			timeout = nats.DefaultTimeout
		}
		nd := &net.Dialer{Timeout: timeout}
		if o.AllowMultipathTCP != nil {
			nd.SetMultipathTCP(*o.AllowMultipathTCP)
		}
		d.inner = nd
	}
	return d
}

// Dial implements nats.CustomDialer.
func (d *Dialer) Dial(network, address string) (net.Conn, error) {
	c, err := d.inner.Dial(network, address)
	if err != nil {
		return nil, err
	}
	d.dials.Add(1)
	d.kind.Store(-1)
	return &infoConn{Conn: c, d: d}, nil
}

// SkipTLSHandshake reports what the wrapped CustomDialer reports (false
// when it does not say), so that nats.go treats the wrapped dialer alike.
func (d *Dialer) SkipTLSHandshake() bool { return d.skipTLS }

func (d *Dialer) record(r result) {
	d.serverMax.Store(r.serverMax)
	d.kind.Store(int32(r.kind))
}

// guarded reports whether the newest connection's first INFO was
// rewritten, so that nats.go's limit is 0 or the connection's own.
func (d *Dialer) guarded() bool { return resultKind(d.kind.Load()) == rewritten }

// Dials returns the number of connections dialed (for tests).
func (d *Dialer) Dials() uint64 { return d.dials.Load() }
