//go:build !linux

package claimcheck_test

import "time"

// processCPU is not implemented here: the CPU metrics are not reported.
func processCPU(pid int) (time.Duration, bool) { return 0, false }
