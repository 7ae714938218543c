//go:build linux

package shim_test

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// procCPU returns the CPU time (user + system) process pid has used so
// far, from /proc (in clock ticks of 10 ms), and whether it could be read.
func procCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The fields after the command (which may hold spaces) start after
	// its closing parenthesis: state is field 3, utime 14, stime 15.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, true
}
