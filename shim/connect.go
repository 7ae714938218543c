package shim

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/connlimit"
)

// Connect connects like nats.Connect, with these guarantees:
//
//   - No message sent on the connection gets it closed for exceeding
//     max_payload. Right after every connect and reconnect nats.go still
//     holds the server-wide max_payload until the server's second INFO
//     brings the connection's own, account- or user-adjusted one, and a
//     message that passes nats.go's check in that moment reaches the server
//     and gets the connection closed. Connect installs a dialer (wrapping
//     the one the options choose, nats.SetCustomDialer included) that makes
//     each link's first INFO announce a placeholder max_payload (0 on the
//     first link; after a reconnect the least of 4 KiB, the server-wide
//     value and every earlier link's limit): until the link's limit
//     arrives, nats.go refuses every message above the placeholder with
//     nats.ErrMaxPayload without writing anything, and natssend's senders
//     wait for the limit and decide again. The one gap: a reconnect to a
//     link whose limit is below 4 KiB and below every earlier limit. This holds for nats:// and
//     tls:// connections to nats-server v2.10 and later; it does not for
//     TLS-handshake-first and websocket connections, in-process connections
//     and older servers, where the limit is confirmed by a round trip after
//     each reconnect instead (see the package documentation).
//   - Outgoing reconnect buffering is disabled (nats.ReconnectBufSize(-1)).
//     While reconnecting, a send fails at once instead of being held and
//     delivered after the reconnect, when its caller may have timed out and
//     retried. An option that sets a non-negative ReconnectBufSize (0 also
//     means 8 MiB to nats.go) is refused with ErrReconnectBuffer.
//   - The connection reconnects forever (nats.MaxReconnects(-1)) unless an
//     option says otherwise.
//   - The connection's max_payload (nc.MaxPayload) is the account-adjusted
//     one when Connect returns, and when a reconnect handler of the
//     options runs.
//
// With nats.RetryOnFailedConnect, Connect may return before the first
// connection. Until it is made, every publish fails with
// nats.ErrReconnectBufExceeded (nothing is buffered or sent), which
// natssend senders report as not run.
func Connect(url string, opts ...nats.Option) (*nats.Conn, error) {
	// Apply the options to a copy of the defaults, with a sentinel buffer
	// size, to see what they set.
	probe := nats.GetDefaultOptions()
	const unset = -2
	probe.ReconnectBufSize = unset
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&probe); err != nil {
			return nil, err
		}
	}
	if probe.ReconnectBufSize >= 0 {
		return nil, fmt.Errorf("%w: got ReconnectBufSize(%d)", ErrReconnectBuffer, probe.ReconnectBufSize)
	}
	userReconnected := probe.ReconnectedCB
	userAsyncErr := probe.AsyncErrorCB
	all := make([]nats.Option, 0, len(opts)+4)
	all = append(all, nats.MaxReconnects(-1))
	all = append(all, opts...)
	all = append(all,
		nats.ReconnectBufSize(-1),
		nats.SetCustomDialer(connlimit.NewDialer(&probe)),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			// Bring the connection's limit in before user code reacts.
			ctx, cancel := context.WithTimeout(context.Background(), connlimit.DefaultFlushTimeout)
			_, _ = connlimit.For(nc).Limit(ctx)
			cancel()
			if userReconnected != nil {
				userReconnected(nc)
			}
		}),
		nats.ErrorHandler(func(nc *nats.Conn, sub *nats.Subscription, err error) {
			// The server reports a permission violation only here: the
			// senders waiting on the subject end at once (connlimit.WatchDenied).
			if d := connlimit.ParseDenial(err); d != nil {
				connlimit.For(nc).Denied(d)
			}
			if userAsyncErr != nil {
				userAsyncErr(nc, sub, err)
			}
		}),
	)
	nc, err := nats.Connect(url, all...)
	if err != nil {
		return nil, err
	}
	connlimit.For(nc).Hook()
	if !nc.IsConnected() {
		// RetryOnFailedConnect and not connected yet.
		return nc, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), probe.Timeout+connlimit.DefaultFlushTimeout)
	defer cancel()
	if _, err := connlimit.For(nc).Limit(ctx); err != nil && !errors.Is(err, nats.ErrConnectionReconnecting) {
		nc.Close()
		return nil, err
	}
	return nc, nil
}

// CapPayload tells natssend the smallest max_payload on the path nc's
// messages travel, when it is lower than nc's own: a leafnode to a site
// whose server has a lower limit, for example. Since nats-server 2.14.0
// (2.12.7, 2.11.16) the receiving server checks each message from a
// leafnode against its own max_payload and closes the whole leafnode link
// for one that is over it, and the sending side does not see that limit.
//
// From the call on, every natssend sender on nc decides against
// min(n, nc's own limit): Publish*, Client requests and their claim
// checks, the replies of handlers that know nc (Serve, or the Conn
// option), stream frames, and a claimcheck.Store's chunks. What does not
// fit is refused before it is sent (PAYLOAD_TOO_LARGE, OutcomeNotRun) or,
// where the sender makes claim checks, goes as one. A later call replaces
// the cap. Raw nats.go calls on nc, and handlers that do not know nc,
// still send up to nc's own limit.
//
// n <= 0 is an INVALID_ARGUMENT error wrapping ErrInvalidOption, as is a
// nil nc.
func CapPayload(nc *nats.Conn, n int64) error {
	switch {
	case nc == nil:
		return invalidOption("CapPayload: a nil connection")
	case n <= 0:
		return invalidOption("CapPayload(%d): a path limit must be positive", n)
	}
	connlimit.For(nc).SetPathCap(n)
	return nil
}
