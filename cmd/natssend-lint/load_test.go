package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/packages"

	"github.com/natssend/natssend/analyzer"
)

// TestLoadSourceOnlyWhereSendsCanBe: the named packages, the
// dependencies that import nats.go (directly or not) and the main module's
// packages are type-checked from source; nats.go itself, the standard
// library and another module's package that does not use NATS come from
// export data, and the analyzer's graph does not contain them. This is
// what keeps memory independent of dependencies that cannot send.
func TestLoadSourceOnlyWhereSendsCanBe(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list -export")
	}
	t.Parallel()
	root := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		writeTree(t, root, map[string]string{name: content})
	}
	stub, err := os.ReadFile("../../analyzer/testdata/src/github.com/nats-io/nats.go/nats.go")
	if err != nil {
		t.Fatal(err)
	}
	write("natsstub/go.mod", "module github.com/nats-io/nats.go\n\ngo 1.26\n")
	write("natsstub/nats.go", string(stub))
	write("m/go.mod", "module example.com/m\n\ngo 1.26\n\nrequire (\n\tgithub.com/nats-io/nats.go v1.55.0\n\texample.com/lib v0.1.0\n)\n\nreplace github.com/nats-io/nats.go => ../natsstub\n\nreplace example.com/lib => ../lib\n")
	write("lib/go.mod", "module example.com/lib\n\ngo 1.26\n")
	write("lib/plain/plain.go", "package plain\n\nimport \"encoding/json\"\n\nfunc Encode(v any) ([]byte, error) { return json.Marshal(v) }\n")
	write("m/tools/tools.go", "package tools\n\nimport \"os\"\n\nfunc Die() { os.Exit(1) }\n")
	write("m/wire/wire.go", "package wire\n\nimport \"github.com/nats-io/nats.go\"\n\nfunc Send(nc *nats.Conn, b []byte) error { return nc.Publish(\"s\", b) }\n")
	write("m/app/app.go", `package app

import (
	"net/http"

	"github.com/nats-io/nats.go"

	"example.com/lib/plain"
	"example.com/m/tools"
	"example.com/m/wire"
)

func Run(nc *nats.Conn) error {
	b, err := plain.Encode(http.StatusOK)
	if err != nil {
		tools.Die()
	}
	return wire.Send(nc, b)
}
`)
	cfg := &packages.Config{Dir: filepath.Join(root, "m"), Env: append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")}
	pkgs, err := load(cfg, []string{"./app"}, false)
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[string]bool)
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if len(p.Errors) > 0 {
			t.Errorf("%s: %v", p.ID, p.Errors)
		}
		if p.TypesInfo == nil || len(p.Syntax) == 0 {
			t.Errorf("%s is in the analyzer's graph without syntax", p.ID)
		}
		got[p.PkgPath] = true
	})
	for _, want := range []string{"example.com/m/app", "example.com/m/wire", "example.com/m/tools"} {
		if !got[want] {
			t.Errorf("%s was not loaded from source; graph: %v", want, got)
		}
	}
	for _, not := range []string{"example.com/lib/plain", "github.com/nats-io/nats.go", "net/http", "encoding/json", "fmt"} {
		if got[not] {
			t.Errorf("%s was loaded from source, want export data; graph: %v", not, got)
		}
	}
	if len(got) != 3 {
		t.Errorf("analyzer's graph = %v, want app, wire and tools only", got)
	}
	// The types of a dependency read from export data are those the
	// source packages see: app's call of wire.Send type-checked against
	// wire's source, and of plain.Encode against plain's export data.
	app := pkgs[0]
	if obj := app.Types.Scope().Lookup("Run"); obj == nil {
		t.Fatalf("app.Run not found")
	}
	for _, imp := range app.Types.Imports() {
		if imp.Path() == "example.com/lib/plain" && imp.Scope().Lookup("Encode") == nil {
			t.Errorf("plain from export data lacks Encode")
		}
	}
}

func TestNeedsAllFacts(t *testing.T) {
	type fact struct{ analysis.Fact }
	plain := &analysis.Analyzer{Name: "plain"}
	facts := &analysis.Analyzer{Name: "facts", FactTypes: []analysis.Fact{fact{}}}
	self := &analysis.Analyzer{Name: "self", FactTypes: []analysis.Fact{fact{}}, Requires: []*analysis.Analyzer{plain}}
	if needsAllFacts(self) {
		t.Error("an analyzer with only its own facts needs all facts")
	}
	deep := &analysis.Analyzer{Name: "deep", Requires: []*analysis.Analyzer{plain, {Name: "mid", Requires: []*analysis.Analyzer{facts}}}}
	if !needsAllFacts(deep) {
		t.Error("an analyzer requiring one with facts does not need all facts")
	}
	if needsAllFacts(analyzer.Analyzer) {
		// A tripwire, not a rule of the analyzer: if natssend comes to
		// require an analyzer with facts of its own (ctrlflow, say), the
		// standalone load falls back to reading every dependency from
		// source, as a singlechecker does: results stay those of go vet,
		// but the cost is back to 5-12x the floor (BENCHMARKS.md).
		t.Error("natssend requires an analyzer with facts: natssend-lint now loads every dependency from source; see needsAllFacts")
	}
}

// TestLoadMixedIdentity: a named package (base) imported through a package
// read from export data (mid) is the same package for the types of every
// importer: top assigns mid's base.T to its own base.T.
func TestLoadMixedIdentity(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list -export")
	}
	t.Parallel()
	root := t.TempDir()
	files := map[string]string{
		"go.mod":         "module example.com/m\n\ngo 1.26\n",
		"base/base.go":   "package base\n\ntype T struct{ N int }\n",
		"mid/mid.go":     "package mid\n\nimport \"example.com/m/base\"\n\nfunc F() base.T { return base.T{N: 1} }\n",
		"top/top.go":     "package top\n\nimport (\n\t\"example.com/m/base\"\n\t\"example.com/m/mid\"\n)\n\nvar V base.T = mid.F()\n",
		"other/other.go": "package other\n\nimport \"example.com/m/mid\"\n\nvar W = mid.F().N\n",
	}
	writeTree(t, root, files)
	cfg := &packages.Config{Dir: root, Env: append(os.Environ(), "GOPROXY=off", "GOWORK=off")}
	pkgs, err := load(cfg, []string{"./top", "./base", "./other"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if n := printErrors(io.Discard, pkgs); n > 0 {
		var b strings.Builder
		printErrors(&b, pkgs)
		t.Errorf("%d errors loading top, base and other (mid from export data):\n%s", n, b.String())
	}
}

// writeTree writes files (by slash-separated path) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
