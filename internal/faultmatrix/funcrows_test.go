package faultmatrix_test

import "testing"

// fnRow is a row written as a function, for send paths that are not one
// Client call.
type fnRow struct {
	name string
	run  func(t *testing.T)
}

func (r fnRow) subtest() (string, func(*testing.T)) { return r.name, r.run }
