package examples_test

import (
	"bufio"
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/natssend/natssend/analyzer"
)

// findings runs the natssend analyzer with its default configuration over
// the packages matching patterns and returns "file:line category" for
// each diagnostic, sorted.
func findings(t *testing.T, patterns ...string) []string {
	t.Helper()
	return findingsWith(t, analyzer.Analyzer, func(string) bool { return true }, patterns...)
}

// findingsWith runs a over the packages matching patterns, with their
// tests, and returns "file:line category" for each diagnostic in a file
// for which keep returns true, sorted.
func findingsWith(t *testing.T, a *analysis.Analyzer, keep func(file string) bool, patterns ...string) []string {
	t.Helper()
	cfg := &packages.Config{Mode: packages.LoadAllSyntax, Tests: true}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	if packages.PrintErrors(pkgs) > 0 {
		t.Fatal("packages did not load")
	}
	graph, err := checker.Analyze([]*analysis.Analyzer{a}, pkgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	seen := map[string]bool{}
	for act := range graph.All() {
		if !act.IsRoot {
			continue
		}
		for _, d := range act.Diagnostics {
			pos := act.Package.Fset.Position(d.Pos)
			if !keep(pos.Filename) {
				continue
			}
			f := fmt.Sprintf("%s:%d %s", filepath.Base(pos.Filename), pos.Line, d.Category)
			// A package and its test variant report the same finding.
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestUnsafeExampleFindings pins the exact set of findings on the service
// written the unsafe way, listed in unsafe/findings.txt (which the
// natssend-lint command's tests check its output against too): each raw
// send, the two retried sends and the connection that keeps the reconnect
// buffer.
func TestUnsafeExampleFindings(t *testing.T) {
	want := readFindings(t, filepath.Join("unsafe", "findings.txt"))
	got := findings(t, "github.com/natssend/natssend/examples/unsafe")
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

// TestExampleFunctionsAsUserCode lints the runnable Example functions of
// shim and claimcheck as a user who copies them into a service gets them
// linted. In place they belong to the external test packages of the shim
// packages, which the default configuration exempts from rawsend and
// reconnectbuf; here nothing is exempt, and only findings in the example
// files count.
func TestExampleFunctionsAsUserCode(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.ShimPackages = nil
	a, err := analyzer.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	isExample := func(file string) bool { return filepath.Base(file) == "example_test.go" }
	got := findingsWith(t, a, isExample, "github.com/natssend/natssend/shim", "github.com/natssend/natssend/claimcheck")
	if len(got) != 0 {
		t.Fatalf("findings in the Example functions, linted as user code:\n%s", strings.Join(got, "\n"))
	}
}

// TestSafeExampleIsClean: the same service on the shim, and everything
// else under examples/ but the unsafe service, has no findings.
func TestSafeExampleIsClean(t *testing.T) {
	if got := findings(t, "github.com/natssend/natssend/examples", "github.com/natssend/natssend/examples/safe"); len(got) != 0 {
		t.Fatalf("findings on examples/safe: %v", got)
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
