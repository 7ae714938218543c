package faultmatrix_test

import (
	"os"
	"strconv"
	"sync"
	"testing"
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

// runRows runs each named row as a subtest, rowsAtOnce at a time, in the
// order given, and returns when all are done. Each group's test runs in
// parallel with the other groups (t.Parallel).
func runRows(t *testing.T, names []string, fns map[string]func(*testing.T)) {
	runRowsAtOnce(t, rowsAtOnce(), names, fns)
}

// runRowsAtOnce is runRows with n rows at a time.
func runRowsAtOnce(t *testing.T, n int, names []string, fns map[string]func(*testing.T)) {
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for _, name := range names {
		if fns[name] == nil {
			t.Fatalf("row %q has no function (duplicate name?)", name)
		}
		fn := fns[name]
		fns[name] = nil
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			t.Run(name, fn)
		}()
	}
	wg.Wait()
}
