//go:build !race

package shim_test

const raceEnabled = false
