package stream

import "sync/atomic"

// dropHook, when set (tests), drops the received frames it returns
// true for, as a loss in transit would.
var dropHook atomic.Pointer[func(kind byte, off int64) bool]

// resends counts the resend requests of every Receiver (for tests).
var resends atomic.Int64

// SetDropHook makes every Receiver drop the received frames f returns
// true for, as a loss in transit would; nil removes it (tests).
func SetDropHook(f func(kind byte, off int64) bool) {
	if f == nil {
		dropHook.Store(nil)
		return
	}
	dropHook.Store(&f)
}

// Resends returns how many resend requests Receivers have sent (tests).
func Resends() int64 { return resends.Load() }
