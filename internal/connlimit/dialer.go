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
	dials     atomic.Uint64
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
