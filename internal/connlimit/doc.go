// Package connlimit owns what natssend knows about a connection's
// max_payload: one State per connection, shared by every sender on it, the
// dialer that makes nats.go's own size check exact, and the one decision
// (Decide) between sending a message, sending it as a claim check and
// refusing it.
//
// # Why a dialer
//
// A NATS server announces its server-wide max_payload in the INFO it sends
// when a client connects, and the connection's own limit (lowered by its
// account or user) in an INFO it sends right after the PONG that answers
// the client's first PING (nats-server processPing, ConnectInfo). nats.go
// marks the connection CONNECTED on that PONG and parses the second INFO
// later in its read loop. In between (right after the first connect and
// after every reconnect) nats.go checks sizes against the server-wide
// value, and a message that the account refuses passes that check, reaches
// the server and gets the connection closed ("Maximum Payload Violation";
// nats.go does not reconnect after it).
//
// Checking first and sending after cannot close that window from outside
// nats.go: a reconnect can happen between the check and the send, and
// nats.go's reconnect holds its connection lock while it dials and
// handshakes, so no lock of ours can span it. The only check that is
// atomic with the write is nats.go's own (under its connection lock), so
// the Dialer makes the value it checks against never too high: every
// link's first INFO announces a placeholder max_payload, which nats.go's
// check turns into nats.ErrMaxPayload for every message above it (nothing
// is written) until the second INFO sets the link's real limit. The
// placeholder is 0 on a connection's first link (shim.Connect waits for
// the real limit before it returns) and, on every later link, the least of
// PlaceholderFloor (4 KiB), the server-wide value and the lowest limit any
// earlier link had: small enough to be below the new link's limit in all
// but one case (next section), large enough for the small messages nats.go
// sends by itself right after a reconnect (a pull consumer's next pull
// request, which with 0 would fail and leave the consumer waiting 30 s for
// its heartbeat timer). A send that meets ErrMaxPayload waits for the
// limit (State.Limit, which does not take the placeholder for the limit)
// and decides again; that is not a replay, since nothing was written.
//
// # What is and is not guaranteed
//
// On a connection made by shim.Connect over plain TCP or TLS upgraded after
// the INFO (the usual nats:// and tls:// set-up), to a server that sends
// the second INFO (v2.10.0 and later; verified in the v2.15.2 sources), no
// message that nats.go lets through exceeds the limit the server enforces
// on that connection, whatever the interleaving of senders and reconnects,
// also before the first connect (nats.RetryOnFailedConnect: nats.go skips
// its size check until then, but with reconnect buffering disabled, as
// shim.Connect requires, every publish before the first connect fails with
// nats.ErrReconnectBufExceeded and nothing is written). The one exception:
// a reconnect to a link whose limit is below 4 KiB and below every limit
// the connection had before; in the moment after it, a message between
// that limit and the placeholder can still pass nats.go's check.
//
// Not covered, and State.Guarded reports false for them: connections not
// made by shim.Connect, TLS-handshake-first and websocket connections (the
// first INFO is not plaintext on the wire the dialer sees), in-process
// connections (nats.InProcessServer bypasses the dialer), and older
// servers. On those, State.Limit confirms the limit by a round trip after
// each reconnect, which closes the window only for sends that start after
// that round trip.
//
// Messages nats.go sends by itself (JetStream acknowledgements, pull
// requests, API requests) meet the same check: in the moment between a
// reconnect and the second INFO, one above the placeholder fails with
// nats.ErrMaxPayload instead of being sent, and nats.go reports the error
// to the caller of the operation, as it reports any failed publish.
// Measured: with a placeholder of 0, a pull consumer's pull request failed
// on 5 of 5 reconnects (the consumer then stalled 30 s); with the 4 KiB
// placeholder it resumes within milliseconds (TestConsumeResumesAfterReconnect
// in package shim).
//
// A limit lowered on a live connection without a new INFO (an account
// update pushed to a running server) is outside what any client can know.
package connlimit
