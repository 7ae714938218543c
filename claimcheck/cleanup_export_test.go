package claimcheck

// ErrCleanupIncomplete is what a clean-up that did not finish wraps, for
// the package's external tests.
var ErrCleanupIncomplete = errCleanupIncomplete
