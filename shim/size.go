package shim

import (
	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/wire"
)

// HeaderSize returns the size in bytes of h's header block as the server
// counts it against max_payload: "NATS/1.0\r\n", one "Key: Value\r\n" line
// per value (values trimmed the way nats.go sends them) and a final "\r\n".
// It returns 0 for a nil or empty map, which nats.go sends as a plain PUB.
// Received status headers (Status, Description) count like any other key
// if the header is sent on.
func HeaderSize(h nats.Header) int { return wire.HeaderSize(h) }

// MsgSize returns the header block plus body of m: exactly the number the
// server compares with max_payload. Subject and reply do not count (unlike
// nats.Msg.Size). A nil message has size 0.
func MsgSize(m *nats.Msg) int {
	if m == nil {
		return 0
	}
	return wire.HeaderSize(m.Header) + len(m.Data)
}
