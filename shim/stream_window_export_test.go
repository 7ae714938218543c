package shim

// StreamWindowNow returns the credit window r grants now (it grows from
// InitialStreamWindow toward the window declared).
func StreamWindowNow(r *ReplyStream) int64 { return r.r.WindowNow() }
