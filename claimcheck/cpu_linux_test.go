//go:build linux

package claimcheck_test

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTick is the unit of /proc/<pid>/stat's CPU times (USER_HZ, 100 on
// Linux).
const clockTick = 10 * time.Millisecond

// processCPU returns the CPU time (user + system, all threads) process
// pid has used so far: this process from getrusage, another from
// /proc/<pid>/stat in clock ticks. ok is false when it cannot be read.
func processCPU(pid int) (d time.Duration, ok bool) {
	if pid == os.Getpid() {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			return 0, false
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may contain spaces; fields 14 and 15
	// (utime, stime) count from the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(u+s) * clockTick, true
}
