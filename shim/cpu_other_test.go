//go:build !linux

package shim_test

import "time"

// selfCPU is not implemented here: the CPU metrics are not reported.
func selfCPU() (time.Duration, bool) { return 0, false }
