package faultmatrix_test

import "testing"

// fnRow is a row written as a function, for send paths that are not one
// Client call.
type fnRow struct {
	name string
	run  func(t *testing.T)
}

func runFnRows(t *testing.T, rows []fnRow) {
	fns := make(map[string]func(*testing.T), len(rows))
	names := make([]string, 0, len(rows))
	for _, r := range rows {
		names = append(names, r.name)
		fns[r.name] = r.run
	}
	runRows(t, names, fns)
}
