package faultmatrix_test

import (
	"context"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// rowsAtOnce is how many rows of one group run at once (each with its own
// server); NATSSEND_MATRIX_PARALLEL overrides it. Rows mostly wait on
// protocol events, so more than the cores is fine; each group is a
// parallel test too.
func rowsAtOnce() int {
	if n, err := strconv.Atoi(os.Getenv("NATSSEND_MATRIX_PARALLEL")); err == nil && n > 0 {
		return n
	}
	return 4
}

// matrixRow is a row of the matrix: its name and its subtest.
type matrixRow interface {
	subtest() (name string, run func(t *testing.T))
}

// runRows runs each row as a subtest, rowsAtOnce at a time, in the order
// given, and returns when all are done. Each group's test runs in
// parallel with the other groups (t.Parallel).
func runRows[R matrixRow](t *testing.T, rows []R) {
	runRowsAtOnce(t, rowsAtOnce(), rows)
}

// runRowsAtOnce is runRows with n rows at a time.
func runRowsAtOnce[R matrixRow](t *testing.T, n int, rows []R) {
	seen := make(map[string]bool, len(rows))
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for _, r := range rows {
		name, fn := r.subtest()
		if seen[name] {
			t.Fatalf("two rows are named %q", name)
		}
		seen[name] = true
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			t.Run(name, fn)
		})
	}
	wg.Wait()
}

// newCall returns the call of a row with deadline d (long if 0); its
// context is cancelled when the row ends.
func newCall(t *testing.T, d time.Duration) *call {
	if d == 0 {
		d = long
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return &call{ctx: ctx, cancel: cancel}
}
