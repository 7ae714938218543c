package objstore

import (
	"context"
	"sync"
	"time"
)

// Budget bounds bytes on their way: asked for on one connection and not
// yet received (a Reader's), or published and not yet acknowledged (a
// Store's uploads). Acquire waits for room; Delivered gives back bytes
// that arrived, Release bytes that will not.
//
// With Adapt, its limit follows the rate it drains at (what Delivered
// gives back while bytes are owed): what arrives within the delay at
// that rate, between minBudgetLimit and its size. On a slow link or a
// starved host, what is owed then is what arrives within about that
// delay, so that other messages on the connection (an upload's
// acknowledgements, a call's reply, a clean-up's answers) do not queue
// behind many seconds of chunks, nor do acknowledgements wait past their
// timeout behind other uploads.
type Budget struct {
	mu      sync.Mutex
	cap     int64
	limit   int64 // at most cap; 0: cap
	used    int64
	waiters []*budgetWaiter

	// The drain rate (see Adapt): the busy time and bytes of the window
	// being measured, since when bytes are owed, the last delivery.
	delay     time.Duration // 0: the limit is the size
	busyFrom  time.Time
	lastAt    time.Time
	busyTime  time.Duration
	busyBytes int64
	rate      float64 // bytes per second; 0 until measured
}

type budgetWaiter struct {
	n     int64
	ready chan struct{}
}

// NewBudget returns a Budget of n bytes (at least 1).
func NewBudget(n int64) *Budget { return &Budget{cap: max(n, 1)} }

// Adapt makes the Budget's limit what it drains in delay (see Budget).
func (b *Budget) Adapt(delay time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.delay = delay
}

// Cap returns the Budget's size.
func (b *Budget) Cap() int64 { return b.cap }

// Acquire takes n bytes (at most the Budget's size: more is taken as the
// whole Budget) in the order callers asked, waiting until they are free
// or ctx ends. It returns what it took.
func (b *Budget) Acquire(ctx context.Context, n int64) (int64, error) {
	n = min(max(n, 1), b.cap)
	b.mu.Lock()
	if len(b.waiters) == 0 && b.fits(n) {
		b.take(n)
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

// TryAcquire is Acquire without waiting: ok is false when nobody waits
// and n bytes fit.
func (b *Budget) TryAcquire(n int64) (int64, bool) {
	n = min(max(n, 1), b.cap)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.waiters) > 0 || !b.fits(n) {
		return 0, false
	}
	b.take(n)
	return n, true
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

// Release gives back n bytes taken with Acquire that will not arrive (a
// batch shorter than asked for, a request given up).
func (b *Budget) Release(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.used = max(b.used-n, 0)
	b.grant()
	b.mu.Unlock()
}

// Delivered gives back n bytes taken with Acquire that arrived (a reply
// received, an upload's message acknowledged): with Adapt, they count
// toward the rate the Budget drains at.
func (b *Budget) Delivered(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	if b.delay > 0 {
		b.measure(n)
	}
	b.used = max(b.used-n, 0)
	b.grant()
	b.mu.Unlock()
}

// rateWindow is the busy time over which each measurement of the drain
// rate is made (a moving average of them).
const rateWindow = 100 * time.Millisecond

// measure adds n bytes delivered now to the drain rate, and sets the
// limit from it once a rateWindow of busy time has passed; b.mu is held.
func (b *Budget) measure(n int64) {
	now := time.Now()
	from := b.lastAt
	if b.busyFrom.After(from) {
		from = b.busyFrom
	}
	b.lastAt = now
	if d := now.Sub(from); d > 0 {
		b.busyTime += d
	}
	b.busyBytes += n
	if b.busyTime < rateWindow {
		return
	}
	r := float64(b.busyBytes) / b.busyTime.Seconds()
	if b.rate > 0 {
		r = 0.7*b.rate + 0.3*r
	}
	b.rate, b.busyTime, b.busyBytes = r, 0, 0
	b.limit = min(max(int64(r*b.delay.Seconds()), minBudgetLimit), b.cap)
}

// take takes n bytes; b.mu is held. Bytes owed from nothing start the
// drain rate's busy time.
func (b *Budget) take(n int64) {
	if b.used == 0 {
		b.busyFrom = time.Now()
	}
	b.used += n
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

// minBudgetLimit is the least Adapt and SetLimit lower a Budget's limit
// to.
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
		b.take(w.n)
		close(w.ready)
	}
}
