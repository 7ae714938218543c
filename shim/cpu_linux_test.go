//go:build linux

package shim_test

import (
	"syscall"
	"time"
)

// selfCPU returns the CPU time (user + system, every thread) this process
// has used so far, and whether it could be read. With the server in a
// child process, that is the client's own cost.
func selfCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
