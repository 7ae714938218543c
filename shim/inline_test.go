package shim_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// TestHotPathInlines guards what the Publish functions' hot path (exact,
// in publish.go) rests on and nothing else would show but a benchmark:
// the compiler inlines connlimit.For's cache hit (at exactly the inlining
// budget, so any addition to it undoes this) and State.Exact into exact.
// It asks the compiler (go build -gcflags=-m) for its inlining decisions.
func TestHotPathInlines(t *testing.T) {
	t.Parallel()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	first, last := funcLines(t, "publish.go", "exact")
	out, err := exec.Command(goCmd, "build", "-gcflags=-m", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m: %v\n%s", err, out)
	}
	for _, callee := range []string{`connlimit\.For`, `connlimit\.\(\*State\)\.Exact`} {
		re := regexp.MustCompile(`(?m)^(?:\S*/)?publish\.go:(\d+):\d+: inlining call to ` + callee + `$`)
		found := false
		for _, m := range re.FindAllSubmatch(out, -1) {
			if line, _ := strconv.Atoi(string(m[1])); line >= first && line <= last {
				found = true
			}
		}
		if !found {
			t.Errorf("%s is not inlined into exact (publish.go:%d-%d); check go build -gcflags=-m=2 ./internal/connlimit for its cost", callee, first, last)
		}
	}
}

// funcLines is the first and last line of the function name in file.
func funcLines(t *testing.T, file, name string) (int, int) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == name {
			return fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
		}
	}
	t.Fatalf("no func %s in %s", name, file)
	return 0, 0
}
