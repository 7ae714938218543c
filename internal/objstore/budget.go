package objstore

import (
	"context"
	"sync"
)

// Budget bounds the bytes that have been asked for on one connection and
// not yet received. Acquire waits for room; Release gives it back. Its
// limit is its size, or less while the connection receives slowly (see
// SetLimit): what is owed then is what arrives within about a second, so
// that other messages on the connection (an upload's acknowledgements, a
// call's reply) do not queue behind many seconds of chunks.
type Budget struct {
	mu      sync.Mutex
	cap     int64
	limit   int64 // at most cap; 0: cap
	used    int64
	waiters []*budgetWaiter
}

type budgetWaiter struct {
	n     int64
	ready chan struct{}
}

// NewBudget returns a Budget of n bytes (at least 1).
func NewBudget(n int64) *Budget { return &Budget{cap: max(n, 1)} }

// Cap returns the Budget's size.
func (b *Budget) Cap() int64 { return b.cap }

// Acquire takes n bytes (at most the Budget's size: more is taken as the
// whole Budget) in the order callers asked, waiting until they are free
// or ctx ends. It returns what it took.
func (b *Budget) Acquire(ctx context.Context, n int64) (int64, error) {
	n = min(max(n, 1), b.cap)
	b.mu.Lock()
	if len(b.waiters) == 0 && b.fits(n) {
		b.used += n
		b.mu.Unlock()
		return n, nil
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return n, nil
	case <-ctx.Done():
		b.mu.Lock()
		select {
		case <-w.ready:
			// Granted meanwhile: give it back.
			b.used -= n
		default:
			for i, x := range b.waiters {
				if x == w {
					b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
					break
				}
			}
		}
		b.grant()
		b.mu.Unlock()
		return 0, ctx.Err()
	}
}

// Used returns the bytes taken and not yet given back.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Waiting returns how many callers wait in Acquire.
func (b *Budget) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waiters)
}

// Release gives back n bytes taken with Acquire.
func (b *Budget) Release(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.used = max(b.used-n, 0)
	b.grant()
	b.mu.Unlock()
}

// fits reports whether n more bytes fit the limit; b.mu is held. With
// nothing owed anything fits: a request larger than a lowered limit is
// not kept waiting for ever.
func (b *Budget) fits(n int64) bool {
	limit := b.cap
	if b.limit > 0 {
		limit = b.limit
	}
	return b.used == 0 || b.used+n <= limit
}

// minBudgetLimit is the least SetLimit lowers a Budget's limit to.
const minBudgetLimit = 1 << 20

// SetLimit sets the Budget's limit to n bytes, within [1 MiB, its size].
func (b *Budget) SetLimit(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.limit = min(max(n, minBudgetLimit), b.cap)
	b.grant()
}

// Limit returns the Budget's limit.
func (b *Budget) Limit() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.limit > 0 {
		return b.limit
	}
	return b.cap
}

// grant wakes the waiters at the head of the queue that now fit.
func (b *Budget) grant() {
	for len(b.waiters) > 0 && b.fits(b.waiters[0].n) {
		w := b.waiters[0]
		b.waiters = b.waiters[1:]
		b.used += w.n
		close(w.ready)
	}
}
