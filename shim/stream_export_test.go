package shim

// Frame kinds and the frame prefix, for tests that speak or watch the
// stream protocol.
const (
	FrameStart     = frameStart
	FrameData      = frameData
	FrameEnd       = frameEnd
	FrameError     = frameError
	FrameHeartbeat = frameHeartbeat
	FramePrefix    = framePrefix
)

// SetStreamDropHook makes every ReplyStream drop the received frames f
// returns true for, as a loss in transit would; nil removes it.
func SetStreamDropHook(f func(kind byte, off int64) bool) {
	if f == nil {
		streamDropHook.Store(nil)
		return
	}
	streamDropHook.Store(&f)
}

// StreamResends returns how many resend requests ReplyStreams have sent.
func StreamResends() int64 { return streamResends.Load() }
