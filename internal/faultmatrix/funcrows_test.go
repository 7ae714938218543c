package faultmatrix_test

import "testing"

// fnRow is a row written as a function, for send paths that are not one
// Client call.
type fnRow struct {
	name string
	run  func(t *testing.T)
}

// runFnRows runs rows, rowsAtOnce at a time.
func runFnRows(t *testing.T, rows []fnRow) { runFnRowsAtOnce(t, rowsAtOnce(), rows) }

// runFnRowsAtOnce runs rows, n at a time.
func runFnRowsAtOnce(t *testing.T, n int, rows []fnRow) {
	fns := make(map[string]func(*testing.T), len(rows))
	names := make([]string, 0, len(rows))
	for _, r := range rows {
		names = append(names, r.name)
		fns[r.name] = r.run
	}
	runRowsAtOnce(t, n, names, fns)
}
