// Package pace paces repeated work; it knows nothing of NATS.
package pace

import (
	"context"
	"time"
)

// Steps is a schedule of pauses between attempts.
type Steps []time.Duration

// Standard is the schedule most callers use.
var Standard = Steps{20 * time.Millisecond, 200 * time.Millisecond, time.Second}

// Until calls op with the attempt number until it succeeds or ctx ends.
func (s Steps) Until(ctx context.Context, op func(attempt int) error) error { // want Until:`retries parameter 1`
	for n := 1; ; n++ {
		if err := op(n); err == nil {
			return nil
		}
		if err := s.wait(ctx, n); err != nil {
			return err
		}
	}
}

// Each calls op once for every index below n, whatever op returns, and
// reports how many failed: the index is another item each time.
func (s Steps) Each(n int, op func(i int) error) int {
	failed := 0
	for i := 0; i < n; i++ {
		if err := op(i); err != nil {
			failed++
			continue
		}
	}
	return failed
}

func (s Steps) wait(ctx context.Context, n int) error {
	d := s[len(s)-1]
	if n < len(s) {
		d = s[n]
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
