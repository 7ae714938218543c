package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// auditOnly is a package whose connects and sends -audit lists, none of
// them a finding: a reviewed publish, a connect delegated to the callers
// of an exported function, and one it cannot judge.
const auditOnly = `// Package dial connects with its callers' options.
package dial

import "github.com/nats-io/nats.go"

// Dial connects with the caller's options plus fixed ones.
func Dial(url string, opts ...nats.Option) (*nats.Conn, error) {
	opts = append(opts, nats.MaxReconnects(-1))
	return nats.Connect(url, opts...)
}

// Sized connects with a buffer size it is given.
func Sized(url string, size int) (*nats.Conn, error) {
	return nats.Connect(url, nats.ReconnectBufSize(size))
}

// Ping publishes a liveness probe.
func Ping(nc *nats.Conn) error {
	//natssend:reviewed liveness probe, 2 bytes
	return nc.Publish("probe", []byte("ok"))
}
`

// TestAuditExitStatus: -audit lists entries that are not findings
// (reviewed, delegated, unjudged) without changing the exit status: 0
// when it lists only those, 3 when there are findings too, the same in
// text and -json.
func TestAuditExitStatus(t *testing.T) {
	t.Parallel()
	bin := buildLint(t)
	dir := setup(t)
	if err := os.MkdirAll(filepath.Join(dir, "dial"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dial", "dial.go"), []byte(auditOnly), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"-audit", "./dial"}, 0},
		{[]string{"-audit", "-json", "./dial"}, 0},
		{[]string{"-audit", "-vet", "./dial"}, 0},
		{[]string{"-audit", "./dial", "./app"}, 3},
		{[]string{"-audit", "-json", "./dial", "./app"}, 3},
	} {
		code, stdout, stderr := run(t, dir, bin, c.args...)
		if code != c.want {
			t.Errorf("natssend-lint %v: exit %d, want %d\n%s%s", c.args, code, c.want, stdout, stderr)
		}
		out := stderr
		if strings.Contains(strings.Join(c.args, " "), "-json") {
			out = stdout
			if !json.Valid([]byte(stdout)) {
				t.Errorf("natssend-lint %v: not JSON:\n%s", c.args, stdout)
			}
		}
		// The entries are listed all the same.
		for _, entry := range []string{"reviewed raw (*nats.Conn).Publish (rawsend): liveness probe", "delegated nats.Connect to the calls of exported Dial", "unjudged nats.Connect: a non-constant ReconnectBufSize"} {
			if !strings.Contains(out, entry) {
				t.Errorf("natssend-lint %v: no %q in\n%s", c.args, entry, out)
			}
		}
	}
}
