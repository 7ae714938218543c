package claimcheck

import "fmt"

// DefaultOpenWindow is the bytes an Open reader holds at most, read
// ahead of its caller, unless WithOpenWindow says otherwise: each
// direct-get batch asks for half of it.
const DefaultOpenWindow = 1 << 20

// WithOpenWindow sets Open's window in bytes (default DefaultOpenWindow,
// at least 1024): a reader asks for half of it per batch and keeps at
// most one batch read ahead of its caller, so it holds at most the window
// (or two chunks, when a chunk is larger than half of it) in memory. A
// larger window keeps more in flight on a link with a long round trip.
func WithOpenWindow(n int) Option {
	return func(c *config) error {
		if n < 1024 || n > MaxSize {
			return fmt.Errorf("%w: claimcheck: open window must be 1024..%d bytes, got %d", ErrInvalidOption, MaxSize, n)
		}
		c.openWindow = n
		return nil
	}
}
