package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sample is one measured run.
type sample struct {
	wall time.Duration
	// maxKiB is the child's rusage peak RSS: the largest single process of
	// its tree (Linux reports the maximum over waited-for descendants, not
	// their sum).
	maxKiB int64
	// treeKiB is the peak of the summed RSS of the live process tree,
	// sampled every few milliseconds from /proc: what a CI runner sees. A
	// sampled peak can miss a short spike; it never over-counts.
	treeKiB int64
}

// command is one measured command line.
type command struct {
	name string
	bin  string
	args []string
	env  []string
	// ok are the accepted exit statuses besides 0 (natssend-lint exits 3
	// when there are findings).
	ok []int
}

// run runs c in dir and measures it.
func (c command) run(dir string) (sample, error) {
	cmd := exec.Command(c.bin, c.args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Env = append(cmd.Env, c.env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return sample{}, err
	}
	done := make(chan struct{})
	peak := make(chan int64, 1)
	go func() { peak <- sampleTree(cmd.Process.Pid, done) }()
	err := cmd.Wait()
	wall := time.Since(start)
	close(done)
	tree := <-peak
	if exit, ok := err.(*exec.ExitError); ok && slices.Contains(c.ok, exit.ExitCode()) {
		err = nil
	}
	if err != nil {
		tail := stderr.String()
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return sample{}, fmt.Errorf("%s %s in %s: %v\n%s", c.name, strings.Join(c.args, " "), dir, err, tail)
	}
	var maxKiB int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		maxKiB = int64(ru.Maxrss) // KiB on Linux
	}
	return sample{wall: wall, maxKiB: maxKiB, treeKiB: tree}, nil
}

// sampleTree polls the summed RSS of pid and its descendants until done is
// closed and returns the largest sum seen, in KiB.
func sampleTree(pid int, done <-chan struct{}) int64 {
	var peak int64
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if s := treeRSS(pid); s > peak {
			peak = s
		}
		select {
		case <-done:
			return peak
		case <-tick.C:
		}
	}
}

var pageKiB = int64(os.Getpagesize() / 1024)

// treeRSS returns the summed RSS of pid and its descendants in KiB.
func treeRSS(pid int) int64 {
	var sum int64
	stack := []int{pid}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", p)); err == nil {
			if f := strings.Fields(string(b)); len(f) > 1 {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				sum += n * pageKiB
			}
		}
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", p))
		for _, t := range tasks {
			b, err := os.ReadFile(t)
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					stack = append(stack, c)
				}
			}
		}
	}
	return sum
}

// median returns the medians of each field of s, taken separately.
func median(s []sample) sample {
	w := make([]time.Duration, len(s))
	m := make([]int64, len(s))
	t := make([]int64, len(s))
	for i, x := range s {
		w[i], m[i], t[i] = x.wall, x.maxKiB, x.treeKiB
	}
	slices.Sort(w)
	slices.Sort(m)
	slices.Sort(t)
	return sample{w[len(w)/2], m[len(m)/2], t[len(t)/2]}
}

// salted copies bin to dir with some bytes appended: the same program
// under a new content hash, so that the go command's vet cache, keyed by
// the vet tool's -V=full hash, has nothing for it (a cold vet cache with a
// warm build cache, as after installing a new natssend-lint).
func salted(bin, dir string, n int) (string, error) {
	b, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, fmt.Sprintf("%s-cold%d", filepath.Base(bin), n))
	b = append(b, fmt.Sprintf("\nsynthbench salt %d %d\n", n, time.Now().UnixNano())...)
	return out, os.WriteFile(out, b, 0o755)
}

func mib(kib int64) string { return fmt.Sprintf("%.0f MiB", float64(kib)/1024) }
