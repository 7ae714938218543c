package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/types"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/natssend/natssend/analyzer"
)

// probeFact names the object it is about.
type probeFact struct{ Of string }

func (*probeFact) AFact()           {}
func (f *probeFact) String() string { return f.Of }

// probe exports a fact on every object its package declares at package
// level, every method and every struct field, and a package fact; then
// reports, at each use of another package's object, the fact it finds,
// and once per package every object and package fact it can see. Its
// findings are what one package sees of the facts of the others.
var probe = &analysis.Analyzer{
	Name:      "probe",
	Doc:       "reports the facts each package sees",
	FactTypes: []analysis.Fact{new(probeFact), new(probePkgFact)},
	Run: func(pass *analysis.Pass) (any, error) {
		export := func(obj types.Object) {
			pass.ExportObjectFact(obj, &probeFact{Of: pass.Pkg.Path() + "." + obj.Name()})
		}
		scope := pass.Pkg.Scope()
		for _, name := range scope.Names() {
			obj := scope.Lookup(name)
			export(obj)
			if tn, ok := obj.(*types.TypeName); ok {
				if named, ok := tn.Type().(*types.Named); ok {
					for m := range named.Methods() {
						export(m)
					}
				}
				if st, ok := tn.Type().Underlying().(*types.Struct); ok {
					for f := range st.Fields() {
						export(f)
					}
				}
			}
		}
		pass.ExportPackageFact(&probePkgFact{Of: pass.Pkg.Path()})
		for _, f := range pass.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				id, ok := n.(*ast.Ident)
				if !ok {
					return true
				}
				obj := pass.TypesInfo.Uses[id]
				if obj == nil || obj.Pkg() == nil || obj.Pkg() == pass.Pkg {
					return true
				}
				var fact probeFact
				if pass.ImportObjectFact(obj, &fact) {
					pass.Reportf(id.Pos(), "%s: %s", id.Name, fact.Of)
				} else {
					pass.Reportf(id.Pos(), "%s: no fact", id.Name)
				}
				return true
			})
		}
		// The objects and packages of AllObjectFacts and AllPackageFacts
		// must be those of this package's universe: reached through its
		// imports (the fixture's module only: the walk stays off the
		// packages read from export data).
		reached := map[*types.Package]bool{pass.Pkg: true}
		var walk func(p *types.Package)
		walk = func(p *types.Package) {
			for _, imp := range p.Imports() {
				if !reached[imp] && strings.HasPrefix(imp.Path(), "example.com/") {
					reached[imp] = true
					walk(imp)
				}
			}
		}
		walk(pass.Pkg)
		foreign := func(p *types.Package) string {
			if !reached[p] {
				return " (another universe)"
			}
			return ""
		}
		var seen []string
		for _, f := range pass.AllObjectFacts() {
			seen = append(seen, f.Fact.(*probeFact).Of+foreign(f.Object.Pkg()))
		}
		for _, f := range pass.AllPackageFacts() {
			seen = append(seen, "package "+f.Fact.(*probePkgFact).Of+foreign(f.Package))
		}
		for _, imp := range pass.Pkg.Imports() {
			var fact probePkgFact
			if pass.ImportPackageFact(imp, &fact) {
				seen = append(seen, "imported package "+fact.Of)
			}
		}
		slices.Sort(seen)
		if len(pass.Files) > 0 {
			pass.Reportf(pass.Files[0].Package, "sees %s", strings.Join(seen, ", "))
		}
		return nil, nil
	},
}

type probePkgFact struct{ Of string }

func (*probePkgFact) AFact()           {}
func (f *probePkgFact) String() string { return f.Of }

// TestRunAsChecker: the driver's run gives the findings and errors that
// go/analysis/checker.Analyze gives over the same packages loaded without
// twins: which facts each package sees (a method's, a field's, a type's
// from any package below; a function's or a variable's from a package it
// imports), with the named packages type-checked against twins or not,
// AllObjectFacts and AllPackageFacts giving objects and packages of the
// asking package's own universe; and an error in one package skipping its
// analysis and failing every package above it.
func TestRunAsChecker(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list -export")
	}
	t.Parallel()
	root := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.26\n",
		// c and b are not named: loaded from source for their facts,
		// and twinned.
		"c/c.go": `package c

const K = 1

var V = 2

type T struct{ Field int }

func (T) M() {}

func F() T { return T{} }

func g() {}
`,
		"b/b.go": `package b

import "example.com/m/c"

var W = c.V

func New() c.T { return c.F() }
`,
		// a is named and sees c only through b.
		"a/a.go": `package a

import "example.com/m/b"

func Use() int {
	t := b.New()
	t.M()
	return t.Field + b.W
}
`,
		// d is not named but imports the named a: not twinned.
		"d/d.go": `package d

import "example.com/m/a"

func D() int { return a.Use() }
`,
		"e/e.go": `package e

import (
	"example.com/m/c"
	"example.com/m/d"
)

var E = d.D() + c.K
`,
		// broken does not type-check: its analysis is skipped, and
		// that of up, which imports it, fails.
		"broken/broken.go": "package broken\n\nvar X int = \"no\"\n",
		"up/up.go":         "package up\n\nimport \"example.com/m/broken\"\n\nvar Y = broken.X\n",
	}
	writeTree(t, root, files)
	patterns := []string{"./a", "./e", "./up"}
	config := func() *packages.Config {
		return &packages.Config{Dir: root, Env: append(os.Environ(), "GOPROXY=off", "GOWORK=off")}
	}

	// go/analysis/checker over the packages loaded without twins.
	l, roots, err := newLoader(config(), patterns, false, false)
	if err != nil {
		t.Fatal(err)
	}
	l.check(nil)
	graph, err := checker.Analyze([]*analysis.Analyzer{probe}, l.pkgs(roots), nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := graph.PrintJSON(&buf); err != nil {
		t.Fatal(err)
	}
	printed := buf.String()
	want, err := readTree(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"failed prerequisites", "skipped due to errors", "M: example.com/m/c.M", "sees example.com/m/a.Use, example.com/m/b.New"} {
		if !strings.Contains(printed, s) {
			t.Fatalf("the fixture does not exercise %q:\n%s", s, printed)
		}
	}

	for _, twins := range []bool{true, false} {
		t.Run(fmt.Sprintf("twins=%v", twins), func(t *testing.T) {
			l, roots, err := newLoader(config(), patterns, false, twins)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(l.twinsOf()); twins && got != 2 || !twins && got != 0 {
				t.Fatalf("twinned: %v, want b and c with twins, none without", l.twinsOf())
			}
			r, err := l.newRun(roots, []*analysis.Analyzer{probe})
			if err != nil {
				t.Fatal(err)
			}
			l.check(r)
			got, _, err := r.tree()
			if err != nil {
				t.Fatal(err)
			}
			if g, w := decodeTree(t, got), decodeTree(t, want); !reflect.DeepEqual(g, w) {
				gb, _ := json.MarshalIndent(g, "", "  ")
				wb, _ := json.MarshalIndent(w, "", "  ")
				t.Errorf("run's results differ from checker.Analyze's\n got: %s\nwant: %s", gb, wb)
			}
		})
	}
}

// twinsOf lists the twinned packages' paths.
func (l *loader) twinsOf() []string {
	var out []string
	for _, n := range l.order {
		if n.twinned {
			out = append(out, n.p.PkgPath)
		}
	}
	return out
}

func decodeTree(t *testing.T, tree jsonTree) map[string]map[string]any {
	t.Helper()
	out := make(map[string]map[string]any)
	for id, byAnalyzer := range tree {
		out[id] = make(map[string]any)
		for name, raw := range byAnalyzer {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatalf("%s %s: %v", id, name, err)
			}
			out[id][name] = v
		}
	}
	return out
}

// TestSendThroughTwins: a named package that reaches nats.go only through
// a chain of twinned packages still uses NATS: its raw send, on a
// connection that comes from the far end of the chain, is a finding. (Its
// own imports name no NATS package; the twins' facts say it.)
func TestSendThroughTwins(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list -export")
	}
	t.Parallel()
	root := t.TempDir()
	stub, err := os.ReadFile("../../analyzer/testdata/src/github.com/nats-io/nats.go/nats.go")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"natsstub/go.mod":  "module github.com/nats-io/nats.go\n\ngo 1.26\n",
		"natsstub/nats.go": string(stub),
		"m/go.mod":         "module example.com/m\n\ngo 1.26\n\nrequire github.com/nats-io/nats.go v1.55.0\n\nreplace github.com/nats-io/nats.go => ../natsstub\n",
		"m/zz/c/c.go":      "package c\n\nimport \"github.com/nats-io/nats.go\"\n\nvar conn *nats.Conn\n\nfunc NC() *nats.Conn { return conn }\n",
		"m/zz/b/b.go":      "package b\n\nimport \"example.com/m/zz/c\"\n\nvar NC = c.NC\n",
		"m/zz/a/a.go":      "package a\n\nimport \"example.com/m/zz/b\"\n\nfunc Send() error { return b.NC().Publish(\"s\", nil) }\n",
	}
	writeTree(t, root, files)
	cfg := &packages.Config{Dir: filepath.Join(root, "m"), Env: append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")}
	tree, _, failed, err := analyzeHere(cfg, []string{"./zz/a"}, analyzer.Analyzer, io.Discard)
	if err != nil || failed {
		t.Fatalf("analyzeHere: failed %v, %v", failed, err)
	}
	got := string(tree["example.com/m/zz/a"]["natssend"])
	if !strings.Contains(got, "a.go:5:") || !strings.Contains(got, "Publish") {
		t.Errorf("no finding at a's Publish; results: %v", tree)
	}
}
