package examples_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

var (
	lintOnce sync.Once
	lintBin  string
	lintErr  error
	lintDir  string
)

// TestMain removes the natssend-lint binary the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if lintDir != "" {
		_ = os.RemoveAll(lintDir)
	}
	os.Exit(code)
}

// lint builds natssend-lint from this checkout (once) and runs it with
// -json and args from the module root, as a user runs it, and returns
// "file:line category" for each finding in a file for which keep returns
// true, sorted.
func lint(t *testing.T, keep func(file string) bool, args ...string) []string {
	t.Helper()
	lintOnce.Do(func() {
		if lintDir, lintErr = os.MkdirTemp("", "natssend-lint"); lintErr != nil {
			return
		}
		lintBin = filepath.Join(lintDir, "natssend-lint")
		out, err := exec.Command("go", "build", "-o", lintBin, "github.com/natssend/natssend/cmd/natssend-lint").CombinedOutput()
		if err != nil {
			lintErr = fmt.Errorf("go build natssend-lint: %v\n%s", err, out)
		}
	})
	if lintErr != nil {
		t.Fatal(lintErr)
	}
	cmd := exec.Command(lintBin, append([]string{"-json"}, args...)...)
	cmd.Dir = ".."
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("natssend-lint -json %v: %v\n%s", args, err, stderr.String())
		}
		code = exit.ExitCode()
	}
	var tree map[string]map[string]json.RawMessage
	if err := json.Unmarshal(stdout.Bytes(), &tree); err != nil {
		t.Fatalf("natssend-lint -json %v: %v\n%s", args, err, stdout.String())
	}
	var out []string
	found := false // any finding: natssend-lint -json exits with 3, as text does
	for id, byAnalyzer := range tree {
		var diags []struct {
			Category string `json:"category"`
			Posn     string `json:"posn"`
		}
		if err := json.Unmarshal(byAnalyzer["natssend"], &diags); err != nil {
			t.Fatalf("%s: %v: %s", id, err, byAnalyzer["natssend"])
		}
		if len(diags) > 0 {
			found = true
		}
		for _, d := range diags {
			// posn is file:line:column.
			i := strings.LastIndexByte(d.Posn, ':')
			j := strings.LastIndexByte(d.Posn[:max(i, 0)], ':')
			if j < 0 {
				t.Fatalf("%s: position %q", id, d.Posn)
			}
			if name := d.Posn[:j]; keep(name) {
				out = append(out, fmt.Sprintf("%s:%s %s", filepath.Base(name), d.Posn[j+1:i], d.Category))
			}
		}
	}
	if want := map[bool]int{true: 3, false: 0}[found]; code != want {
		t.Fatalf("natssend-lint -json %v: exit status %d, want %d\n%s", args, code, want, stderr.String())
	}
	slices.Sort(out)
	return out
}

func all(string) bool { return true }

// TestUnsafeExampleFindings pins the exact set of findings on the service
// written the unsafe way, listed in unsafe/findings.txt (which the
// natssend-lint command's tests check its text output against too): each
// raw send, the two retried sends and the connection that keeps the
// reconnect buffer.
func TestUnsafeExampleFindings(t *testing.T) {
	want := readFindings(t, filepath.Join("unsafe", "findings.txt"))
	got := lint(t, all, "./examples/unsafe/...")
	if !slices.Equal(got, want) {
		t.Fatalf("findings on examples/unsafe:\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
}

// readFindings reads an expected-findings file: one "file:line category"
// per line, # comments, returned sorted.
func readFindings(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	if len(out) == 0 {
		t.Fatalf("%s lists no findings", name)
	}
	return out
}

// TestSafeExampleIsClean: the same service on the shim, with its tests,
// and everything else under examples/ but the unsafe service, has no
// findings.
func TestSafeExampleIsClean(t *testing.T) {
	if got := lint(t, all, "./examples", "./examples/safe/..."); len(got) != 0 {
		t.Fatalf("findings on examples/safe: %v", got)
	}
}

// TestExampleFunctionsAsUserCode lints the runnable Example functions of
// shim and claimcheck as a user who copies them into a service gets them
// linted. In place they belong to the external test packages of the shim
// packages, which the default configuration exempts from rawsend and
// reconnectbuf; here nothing is exempt (-shim-packages names a package
// that does not exist), and only findings in the example files count.
func TestExampleFunctionsAsUserCode(t *testing.T) {
	isExample := func(file string) bool { return filepath.Base(file) == "example_test.go" }
	got := lint(t, isExample, "-shim-packages=example.com/none", "./shim", "./claimcheck")
	if len(got) != 0 {
		t.Fatalf("findings in the Example functions, linted as user code:\n%s", strings.Join(got, "\n"))
	}
}

// TestPublicAPIOnly: the examples and the Example functions import no
// internal package, so that everything in them can be copied into a
// service of one's own.
func TestPublicAPIOnly(t *testing.T) {
	files := []string{filepath.Join("..", "shim", "example_test.go"), filepath.Join("..", "claimcheck", "example_test.go")}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p := strings.Trim(imp.Path.Value, `"`); strings.Contains(p, "/internal/") || strings.HasSuffix(p, "/internal") {
				t.Errorf("%s imports %s", name, p)
			}
		}
	}
}
