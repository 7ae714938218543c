package synthgen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestGenerate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mod")
	st, err := Generate(dir, Options{Packages: 5, Units: 2})
	if err != nil {
		t.Fatal(err)
	}
	if st.Packages != 5 || st.Files != 5 || st.Lines < 5*50 {
		t.Errorf("stats = %+v, want 5 packages of at least 50 lines", st)
	}
	fset := token.NewFileSet()
	for _, name := range []string{"p000/p000.go", "p004/p004.go", "natsstub/nats.go"} {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		if name == "p004/p004.go" {
			var deps []string
			for _, imp := range f.Imports {
				deps = append(deps, imp.Path.Value)
			}
			if !contains(deps, `"synth.example/bench/p003"`) || !contains(deps, `"synth.example/bench/p002"`) {
				t.Errorf("p004 imports %v, want p003 and p002", deps)
			}
		}
	}
	if _, err := Generate(dir, Options{}); err == nil {
		t.Error("Generate into a non-empty directory succeeded")
	}
}

func TestDefaultSize(t *testing.T) {
	if testing.Short() {
		t.Skip("writes ~100k lines")
	}
	dir := t.TempDir()
	st, err := Generate(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Packages < 300 || st.Lines < 90_000 {
		t.Errorf("stats = %+v, want >= 300 packages and about 100k lines", st)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Error(err)
	}
	t.Logf("%+v", st)
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func TestGenerateRealNATS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds against the real nats.go from the module cache")
	}
	sum, err := os.ReadFile("../../go.sum")
	if err != nil {
		t.Fatal(err)
	}
	list := exec.Command("go", append([]string{"list", "-m", "-f", "{{.Path}} {{.Version}}"}, NATSDeps...)...)
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	req := strings.Split(strings.TrimSpace(string(out)), "\n")
	dir := filepath.Join(t.TempDir(), "mod")
	if _, err := Generate(dir, Options{Packages: 3, Units: 1, RealNATS: true, Require: req, GoSum: sum, Stdlib: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "natsstub")); !os.IsNotExist(err) {
		t.Errorf("RealNATS module has a nats.go stub: %v", err)
	}
	cmd := exec.Command("go", "build", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build of the generated module: %v\n%s", err, out)
	}
}

// TestPlain: the packages without nats.go are generated, imported by the
// NATS packages, and the module builds.
func TestPlain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mod")
	st, err := Generate(dir, Options{Packages: 4, Units: 1, Plain: 2})
	if err != nil {
		t.Fatal(err)
	}
	if st.Packages != 6 || st.PlainLines == 0 || st.PlainLines >= st.Lines {
		t.Errorf("stats = %+v, want 6 packages, 2 of them plain", st)
	}
	src, err := os.ReadFile(filepath.Join(dir, "m001", "m001.go"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(src), `"github.com/nats-io/`) || !strings.Contains(string(src), `"synth.example/bench/m000"`) {
		t.Errorf("m001 imports nats.go or not m000:\n%s", src)
	}
	p3, err := os.ReadFile(filepath.Join(dir, "p003", "p003.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(p3), `"synth.example/bench/m001"`) {
		t.Error("p003 does not import m001")
	}
	cmd := exec.Command("go", "build", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
}

// TestGenerateGenerated checks the generated-code shape: a one-file
// command over packages whose every file is marked generated, and that
// the module builds and vets against the stub.
func TestGenerateGenerated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mod")
	st, err := Generate(dir, Options{Generated: 4, GenEntities: 3})
	if err != nil {
		t.Fatal(err)
	}
	if st.Packages != 5 || st.PlainLines < 4*200 {
		t.Errorf("stats = %+v, want 5 packages, 4 generated ones of at least 200 lines", st)
	}
	fset := token.NewFileSet()
	for _, name := range []string{"db/q00/q00.go", "api/o01/o01.go"} {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			t.Fatal(err)
		}
		if !ast.IsGenerated(f) {
			t.Errorf("%s is not marked generated", name)
		}
	}
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet: %v\n%s", err, out)
	}
}
