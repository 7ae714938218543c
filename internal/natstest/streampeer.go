package natstest

import (
	"fmt"
	"time"
)

// The request side of a transfer stream, for tests in which a raw nats.go
// caller speaks the stream protocol by hand (the frames and control
// messages are internal/xfer's).

// StreamHeader is the request header that marks a stream request
// (shim.HeaderStream).
const StreamHeader = "Natssend-Stream"

// StreamMarker is StreamHeader's value for a caller with window and idle.
func StreamMarker(window int64, idle time.Duration) string {
	return fmt.Sprintf("1 %d %d", window, idle.Milliseconds())
}
