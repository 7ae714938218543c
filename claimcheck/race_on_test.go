//go:build race

package claimcheck_test

// raceEnabled reports whether the tests run under the race detector,
// which slows every goroutine several times: the 10,000-reader fan-out
// then measures the detector, and runs without it (make test) instead.
const raceEnabled = true
