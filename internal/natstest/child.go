package natstest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// childEnv names the test a child process of StartChild runs.
const childEnv = "NATSTEST_CHILD"

// Child is a child process started by StartChild.
type Child struct {
	URL string // what the child announced with ServeChild
	Pid int    // its process ID (for measuring its CPU time)
}

// StartChild runs the test named test of this test binary in a child
// process and returns it once it announced its URL with ServeChild.
// Benchmarks use it to keep the server (and, if the child starts them, its
// responders) out of the benchmark's process, so that B/op and allocs/op
// count the client only. args are more flags for the child's test binary
// (-test.cpuprofile=...), env more KEY=VALUE pairs for its environment.
// The child runs until tb's cleanup.
func StartChild(tb testing.TB, test string, args, env []string) *Child {
	tb.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^" + test + "$", "-test.v"}, args...)...)
	cmd.Env = append(append(os.Environ(), childEnv+"="+test), env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if url, ok := strings.CutPrefix(sc.Text(), "URL "); ok {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return &Child{URL: url, Pid: cmd.Process.Pid}
		}
	}
	tb.Fatalf("child %s announced no URL", test)
	return nil
}

// ServeChild is the body of a child test of StartChild: outside such a
// child it skips t; inside it calls start, announces the URL start returns
// and blocks until the parent goes away. Cleanups registered on t by start
// run after that.
func ServeChild(t *testing.T, start func(t *testing.T) string) {
	t.Helper()
	if os.Getenv(childEnv) != t.Name() {
		t.Skip("the child process of a benchmark (natstest.StartChild)")
	}
	fmt.Println("URL " + start(t))
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes stdin
}
