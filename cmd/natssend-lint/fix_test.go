package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// plainApp is a module that uses nats.go and does not require natssend
// yet: the shim import a fix adds cannot build there.
var plainApp = map[string]string{
	"go.mod": "module example.com/plain\n\ngo 1.26\n\nrequire github.com/nats-io/nats.go v1.55.0\n\nreplace github.com/nats-io/nats.go => ../natsstub\n",
	"app/app.go": `// Package app publishes raw.
package app

import "github.com/nats-io/nats.go"

// Announce publishes a greeting.
func Announce(nc *nats.Conn) error {
	return nc.Publish("greetings", []byte("hello"))
}
`,
}

// TestFixWithoutRequirement: -fix in a module that does not require
// natssend changes nothing, prints the commands to run first and fails;
// once they have run, it fixes and the module builds.
func TestFixWithoutRequirement(t *testing.T) {
	t.Parallel()
	bin := buildLint(t)
	dir := filepath.Join(filepath.Dir(setup(t)), "plain")
	for name, content := range plainApp {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, _, stderr := run(t, dir, bin, "-fix", "./...")
	// natssend is not on the module proxy: the remedy is README's require
	// of a clone, not a go get that fails; and the go command's own
	// remedy, cut to "(...; to add it:)", is not quoted.
	recipe := "\tgo mod edit -require=github.com/natssend/natssend@v0.0.0-00010101000000-000000000000 -replace=github.com/natssend/natssend=../natssend\n\tgo mod tidy\n"
	if code != 1 || !strings.Contains(stderr, "changed nothing") || !strings.Contains(stderr, recipe) || strings.Contains(stderr, "go get github.com") || strings.Contains(stderr, "to add it") {
		t.Errorf("-fix without the requirement: exit %d, want 1, nothing changed and the commands to run:\n%s", code, stderr)
	}
	// -fix -diff refuses the same way: no patch whose result cannot build.
	if dcode, diff, dstderr := run(t, dir, bin, "-fix", "-diff", "./..."); dcode != code || diff != "" || dstderr != stderr {
		t.Errorf("-fix -diff without the requirement: exit %d, stdout\n%s\nstderr\n%s\nwant exit %d, no patch and what -fix prints:\n%s", dcode, diff, dstderr, code, stderr)
	}
	if strings.Contains(stderr, "fixed") {
		t.Errorf("-fix without the requirement claims a fix:\n%s", stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "app", "app.go"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != plainApp["app/app.go"] {
		t.Errorf("-fix without the requirement changed app.go:\n%s", b)
	}
	if code, _, stderr := run(t, dir, "go", "build", "./..."); code != 0 {
		t.Errorf("go build after the refused -fix: exit %d\n%s", code, stderr)
	}

	// Run what it says, with the clone (the stub) at ../natssend.
	if err := os.Rename(filepath.Join(filepath.Dir(dir), "natssendstub"), filepath.Join(filepath.Dir(dir), "natssend")); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSuffix(recipe, "\n"), "\n") {
		args := strings.Fields(line)
		if code, _, stderr := run(t, dir, args[0], args[1:]...); code != 0 {
			t.Fatalf("%s: %s", line, stderr)
		}
	}
	code, _, stderr = run(t, dir, bin, "-fix", "./...")
	if code != 0 || !strings.Contains(stderr, "natssend-lint: -fix: fixed 1 finding; none remain\n") {
		t.Errorf("-fix with the requirement: exit %d, want 0 and one finding fixed:\n%s", code, stderr)
	}
	if code, _, stderr := run(t, dir, "go", "build", "./..."); code != 0 {
		t.Errorf("go build after -fix: exit %d\n%s", code, stderr)
	}
}

// TestFixDiffGitApply: the -fix -diff output is a patch git apply
// accepts, from the top of the work tree, and applying it gives the
// files -fix writes.
func TestFixDiffGitApply(t *testing.T) {
	t.Parallel()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	bin := buildLint(t)
	byDiff, byFix := setup(t), setup(t)
	// One import group, sorted, whose last import sorts after the shim's:
	// -fix sorts the added import into place, and so must the patch.
	for _, dir := range []string{byDiff, byFix} {
		if err := os.WriteFile(filepath.Join(dir, "app", "order.go"), []byte(orderGo), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Dir(byDiff)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "fixture"}} {
		if code, _, stderr := run(t, root, git, args...); code != 0 {
			t.Fatalf("git %v: %s", args, stderr)
		}
	}
	code, diff, stderr := run(t, byDiff, bin, "-fix", "-diff", "./...")
	if code != 1 || !strings.HasPrefix(diff, "--- a/fixture/app/app.go\n+++ b/fixture/app/app.go\n@@ ") {
		t.Fatalf("-fix -diff: exit %d, want 1 and a patch of fixture/app/app.go:\n%s%s", code, diff, stderr)
	}
	patch := filepath.Join(t.TempDir(), "fix.patch")
	if err := os.WriteFile(patch, []byte(diff), 0o644); err != nil {
		t.Fatal(err)
	}
	// From a subdirectory too: git apply resolves the paths from the top.
	if code, _, stderr := run(t, byDiff, git, "apply", "--check", patch); code != 0 {
		t.Fatalf("git apply --check: %s\n%s", stderr, diff)
	}
	if code, _, stderr := run(t, root, git, "apply", patch); code != 0 {
		t.Fatalf("git apply: %s\n%s", stderr, diff)
	}
	if code, _, stderr := run(t, byFix, bin, "-fix", "./..."); code != 3 {
		t.Fatalf("-fix: exit %d, want 3\n%s", code, stderr)
	}
	for _, name := range []string{"app/app.go", "app/app_test.go", "app/order.go", "wrap/wrap.go"} {
		a, errA := os.ReadFile(filepath.Join(byDiff, name))
		b, errB := os.ReadFile(filepath.Join(byFix, name))
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if string(a) != string(b) {
			t.Errorf("%s: git apply of -fix -diff gives\n%s\n-fix gives\n%s", name, a, b)
		}
		if code, out, stderr := run(t, byDiff, "gofmt", "-l", name); code != 0 || out != "" {
			t.Errorf("%s after git apply of -fix -diff is not gofmt-clean: %s%s", name, out, stderr)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(byDiff, "app", "order.go")); !strings.Contains(string(b), "\t\"github.com/nats-io/nats.go\"\n\t\"github.com/natssend/natssend/shim\"\n\t\"time\"\n") {
		t.Errorf("app/order.go after the patch: the shim import is not sorted into place:\n%s", b)
	}
	if code, _, stderr := run(t, byDiff, "go", "build", "./..."); code != 0 {
		t.Errorf("go build after git apply: %s", stderr)
	}
}

// orderGo imports nats.go and a package that sorts after the shim in one
// group, as real code does.
const orderGo = `package app

import (
	"github.com/nats-io/nats.go"
	"time"
)

// Tick publishes the time.
func Tick(nc *nats.Conn) error {
	return nc.Publish("tick", []byte(time.Now().String()))
}
`
