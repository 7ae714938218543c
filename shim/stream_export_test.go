package shim

import (
	"github.com/natssend/natssend/internal/stream"
	"github.com/natssend/natssend/internal/xfer"
)

// Frame kinds and the frame prefix, for tests that speak or watch the
// stream protocol.
const (
	FrameStart     = xfer.Start
	FrameData      = xfer.Data
	FrameEnd       = xfer.End
	FrameError     = xfer.Error
	FrameHeartbeat = xfer.Heartbeat
	FramePrefix    = xfer.Prefix
)

// SetStreamDropHook makes every ReplyStream drop the received frames f
// returns true for, as a loss in transit would; nil removes it.
func SetStreamDropHook(f func(kind byte, off int64) bool) { stream.SetDropHook(f) }

// StreamResends returns how many resend requests ReplyStreams have sent.
func StreamResends() int64 { return stream.Resends() }
