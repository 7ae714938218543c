//go:build !linux

package shim_test

import "time"

// procCPU is not measured on this platform.
func procCPU(int) (time.Duration, bool) { return 0, false }
