package shim

import (
	"time"

	"github.com/natssend/natssend/internal/stream"
)

// The stream protocol (docs/protocol.md, 6) is internal/stream's; shim
// builds and reads the request's HeaderStream with it.
const (
	streamVersion    = stream.Version    // the frame protocol's version
	minStreamPayload = stream.MinPayload // the smallest max-payload of a stream caller
)

// streamReq is what a stream request's HeaderStream says.
type streamReq = stream.Req

// parseMarker reads HeaderStream; ok is false when it is absent or not a
// version this responder speaks.
func parseMarker(v string) (streamReq, bool) { return stream.ParseMarker(v) }

// streamMarker is HeaderStream's value: the protocol version, the
// caller's window and idle bound, how long it waits for the first frame
// (0: not said) and the digests it checks beyond SHA-256.
func streamMarker(window int64, idle, first time.Duration) string {
	var ms int64
	if first > 0 {
		ms = timeoutMS(first)
	}
	return stream.Marker(window, idle, ms)
}
