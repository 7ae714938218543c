package shim

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/connlimit"
)

// ErrReconnectBuffer is returned by Connect when an option re-enables
// outgoing reconnect buffering.
var ErrReconnectBuffer = errors.New("natssend: outgoing reconnect buffering must stay disabled (a buffered request is delivered after reconnect, even when the caller already gave up)")

// Connect connects like nats.Connect, with three guarantees:
//
//   - Outgoing reconnect buffering is disabled (nats.ReconnectBufSize(-1)).
//     While reconnecting, a send fails at once instead of being held and
//     delivered after the reconnect, when its caller may have timed out and
//     retried. An option that sets a non-negative ReconnectBufSize (0 also
//     means 8 MiB to nats.go) is refused with ErrReconnectBuffer.
//   - The connection reconnects forever (nats.MaxReconnects(-1)) unless an
//     option says otherwise.
//   - The account-adjusted max_payload is known when Connect returns: the
//     server sends it after its first PONG, so Connect makes one more round
//     trip. After every reconnect the same happens in a reconnect handler
//     (chained before any handler the options install), and natssend's own
//     senders check again before their first send on the new connection.
//
// With nats.RetryOnFailedConnect, Connect may return before the first
// connection; the limit is then confirmed by the first natssend send.
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
	all := make([]nats.Option, 0, len(opts)+3)
	all = append(all, nats.MaxReconnects(-1))
	all = append(all, opts...)
	all = append(all,
		nats.ReconnectBufSize(-1),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			// Bring the account-adjusted limit in before user code reacts.
			_ = connlimit.Refresh(context.Background(), nc)
			if userReconnected != nil {
				userReconnected(nc)
			}
		}),
	)
	nc, err := nats.Connect(url, all...)
	if err != nil {
		return nil, err
	}
	if !nc.IsConnected() {
		// RetryOnFailedConnect and not connected yet.
		return nc, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), probe.Timeout+connlimit.DefaultFlushTimeout)
	defer cancel()
	if err := connlimit.Refresh(ctx, nc); err != nil {
		nc.Close()
		return nil, err
	}
	return nc, nil
}
