package synthgen

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
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
