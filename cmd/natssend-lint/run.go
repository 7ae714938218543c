package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"log"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/packages"
)

// A run analyzes the source packages of a load while it type-checks them:
// each package's analysis starts as soon as the package is type-checked
// and the packages it imports are analyzed (their facts are its input),
// and then drops the package's syntax and type information. The
// dependencies' analysis so overlaps the named packages' type checks, and
// the peak memory is not the whole module's syntax. It gives the results
// of go/analysis/checker.Analyze over the graph load returns, which runs
// only once every package is type-checked: the same analyses on the same
// packages (the named ones, testedOnce, and the source packages they
// depend on), the same facts seen by each, the same errors
// ("analysis skipped due to errors in package", "failed prerequisites").
type run struct {
	fset      *token.FileSet
	analyzers []*analysis.Analyzer // requested, run on the roots
	actions   map[*node]*action
	facts     factStore
	factTypes map[*analysis.Analyzer]map[reflect.Type]bool
}

// action is the analysis of one source package: every analyzer it needs
// there, prerequisites first.
type action struct {
	n         *node
	id        string // the package's ID
	root      bool
	analyzers []*analysis.Analyzer
	deps      []*action // the source packages n imports, analyzed first
	sees      pkgView
	done      chan struct{}
	results   map[*analysis.Analyzer]*result
}

// result is one analyzer's outcome on one package.
type result struct {
	value any
	diags []analysis.Diagnostic
	err   error
}

// newRun prepares the analysis of the source packages that the named
// ones (roots, as testedOnce keeps them) need, by analyzers.
func (l *loader) newRun(roots []*node, analyzers []*analysis.Analyzer) (*run, error) {
	if err := analysis.Validate(analyzers); err != nil {
		return nil, err
	}
	r := &run{fset: l.fset, analyzers: analyzers, actions: make(map[*node]*action)}
	r.facts = factStore{
		objs:   make(map[objectFactKey]analysis.Fact),
		pkgs:   make(map[packageFactKey]analysis.Fact),
		twins:  sourceObjects{twins: l.twins},
		index:  make(map[*types.Package]int),
		twinOf: make(map[*types.Package]*types.Package),
	}
	for _, n := range l.order {
		if n.source {
			r.facts.index[n.types] = len(r.facts.index)
		}
		if n.twinned {
			r.facts.twinOf[n.types] = n.twin
		}
	}
	// need: which analyzers run on which package, as checker's
	// mkAction: an analyzer's prerequisites on the same package, and,
	// for an analyzer with facts, the analyzer on every source import.
	need := make(map[*node]map[*analysis.Analyzer]bool)
	var add func(a *analysis.Analyzer, n *node)
	add = func(a *analysis.Analyzer, n *node) {
		if need[n][a] {
			return
		}
		if need[n] == nil {
			need[n] = make(map[*analysis.Analyzer]bool)
		}
		need[n][a] = true
		for _, req := range a.Requires {
			add(req, n)
		}
		if len(a.FactTypes) > 0 {
			for _, d := range sourceImports(n) {
				add(a, d)
			}
		}
	}
	for _, n := range roots {
		for _, a := range analyzers {
			add(a, n)
		}
	}
	order := prerequisitesFirst(analyzers)
	r.factTypes = make(map[*analysis.Analyzer]map[reflect.Type]bool)
	for _, a := range order {
		r.factTypes[a] = make(map[reflect.Type]bool)
		for _, f := range a.FactTypes {
			r.factTypes[a][reflect.TypeOf(f)] = true
		}
	}
	words := (len(r.facts.index) + 63) / 64
	for _, n := range l.order { // dependencies first
		if need[n] == nil {
			continue
		}
		act := &action{n: n, id: n.p.ID, done: make(chan struct{}), results: make(map[*analysis.Analyzer]*result)}
		act.sees = pkgView{id: act.id, own: n.types, main: !n.twinned, direct: make(bitset, words), transv: make(bitset, words)}
		for _, a := range order {
			if need[n][a] {
				act.analyzers = append(act.analyzers, a)
			}
		}
		for _, d := range sourceImports(n) {
			if da := r.actions[d]; da != nil {
				act.deps = append(act.deps, da)
				act.sees.direct.set(r.facts.index[d.types])
				act.sees.transv.or(da.sees.transv)
			}
		}
		act.sees.transv.or(act.sees.direct)
		r.actions[n] = act
	}
	for _, n := range roots {
		r.actions[n].root = true
	}
	return r, nil
}

// sourceImports returns the source packages n imports: its edges in the
// graph load returns (loader.pkg).
func sourceImports(n *node) []*node {
	var out []*node
	for _, d := range n.imports {
		if d.source {
			out = append(out, d)
		}
	}
	return out
}

// prerequisitesFirst returns the analyzers and those they require, each
// after its prerequisites.
func prerequisitesFirst(analyzers []*analysis.Analyzer) []*analysis.Analyzer {
	var order []*analysis.Analyzer
	seen := make(map[*analysis.Analyzer]bool)
	var visit func(a *analysis.Analyzer)
	visit = func(a *analysis.Analyzer) {
		if seen[a] {
			return
		}
		seen[a] = true
		for _, req := range a.Requires {
			visit(req)
		}
		order = append(order, a)
	}
	for _, a := range analyzers {
		visit(a)
	}
	return order
}

// analyze runs n's action, once the packages it imports are analyzed,
// holding a slot of sem while it works; n is type-checked.
func (r *run) analyze(n *node, sem *slots) {
	act := r.actions[n]
	if act == nil {
		return
	}
	defer close(act.done)
	for _, d := range act.deps {
		<-d.done
	}
	sem.acquire(analyzing)
	defer sem.release()
	for _, a := range act.analyzers {
		act.results[a] = r.exec(act, a)
	}
	// Nothing reads the syntax or the type information again: findings
	// carry positions in the shared FileSet, facts hold no syntax. The
	// types.Package stays, for the packages that import it.
	clear(n.files)
	*n.info = types.Info{}
}

// exec runs a on the package of act, as checker's Action.execOnce does.
func (r *run) exec(act *action, a *analysis.Analyzer) *result {
	res := new(result)
	var failed []string
	if len(a.FactTypes) > 0 {
		for _, d := range act.deps {
			if d.results[a].err != nil {
				failed = append(failed, a.Name+"@"+d.id)
			}
		}
	}
	inputs := make(map[*analysis.Analyzer]any, len(a.Requires))
	for _, req := range a.Requires {
		if act.results[req].err != nil {
			failed = append(failed, req.Name+"@"+act.id)
		}
		inputs[req] = act.results[req].value
	}
	if failed != nil {
		slices.Sort(failed)
		res.err = fmt.Errorf("failed prerequisites: %s", strings.Join(failed, ", "))
		return res
	}
	n, s, d := act.n, &r.facts, &factView{pkgView: &act.sees, analyzer: a, types: r.factTypes[a]}
	p := n.p
	pass := &analysis.Pass{
		Analyzer:     a,
		Fset:         r.fset,
		Files:        n.files,
		OtherFiles:   p.OtherFiles,
		IgnoredFiles: p.IgnoredFiles,
		Pkg:          n.types,
		TypesInfo:    n.info,
		TypesSizes:   p.TypesSizes,
		Module:       analysisModule(p.Module),
		ResultOf:     inputs,
		Report: func(diag analysis.Diagnostic) {
			if err := validateFixes(r.fset, a, diag.SuggestedFixes); err != nil {
				panic(err) // as checker: a bug of the analyzer
			}
			res.diags = append(res.diags, diag)
		},
		ImportObjectFact: func(obj types.Object, fact analysis.Fact) bool {
			return s.importObject(d, obj, fact)
		},
		ImportPackageFact: func(pkg *types.Package, fact analysis.Fact) bool {
			return s.importPackage(d, pkg, fact)
		},
		AllObjectFacts:  func() []analysis.ObjectFact { return s.allObjects(d) },
		AllPackageFacts: func() []analysis.PackageFact { return s.allPackages(d) },
	}
	ran := false // as checker: exporting a fact after Run is a bug of the analyzer
	pass.ExportObjectFact = func(obj types.Object, fact analysis.Fact) {
		if ran {
			log.Panicf("%s@%s: Pass.ExportObjectFact(%s, %T) called after Run", a, act.id, obj, fact)
		}
		s.exportObject(d, obj, fact)
	}
	pass.ExportPackageFact = func(fact analysis.Fact) {
		if ran {
			log.Panicf("%s@%s: Pass.ExportPackageFact(%T) called after Run", a, act.id, fact)
		}
		s.exportPackage(d, fact)
	}
	pass.ReadFile = readable(pass)
	defer func() { ran = true }()
	if len(n.errs) > 0 && !a.RunDespiteErrors {
		res.err = errors.New("analysis skipped due to errors in package")
		return res
	}
	res.value, res.err = a.Run(pass)
	if res.err != nil {
		res.value = nil
		return res
	}
	if got, want := reflect.TypeOf(res.value), a.ResultType; got != want {
		res.value, res.err = nil, fmt.Errorf("internal error: on package %s, analyzer %s returned a result of type %v, but declared ResultType %v",
			pass.Pkg.Path(), a, got, want)
		return res
	}
	for i := range res.diags {
		u, err := resolveURL(a, res.diags[i])
		if err != nil {
			res.value, res.err = nil, err
			return res
		}
		res.diags[i].URL = u
	}
	return res
}

// analysisModule is checker's analysisModuleFromPackagesModule: the
// package's module, or an empty one.
func analysisModule(mod *packages.Module) *analysis.Module {
	if m := convertModule(mod); m != nil {
		return m
	}
	return &analysis.Module{}
}

func convertModule(mod *packages.Module) *analysis.Module {
	if mod == nil {
		return nil
	}
	m := &analysis.Module{
		Path: mod.Path, Version: mod.Version, Replace: convertModule(mod.Replace),
		Time: mod.Time, Main: mod.Main, Indirect: mod.Indirect, Dir: mod.Dir,
		GoMod: mod.GoMod, GoVersion: mod.GoVersion,
	}
	if mod.Error != nil {
		m.Error = &analysis.ModuleError{Err: mod.Error.Err}
	}
	return m
}

// readable is the Pass.ReadFile of every go/analysis driver: the
// package's files, other files and ignored files only.
func readable(pass *analysis.Pass) func(string) ([]byte, error) {
	return func(filename string) ([]byte, error) {
		ok := slices.Contains(pass.OtherFiles, filename) || slices.Contains(pass.IgnoredFiles, filename) ||
			slices.ContainsFunc(pass.Files, func(f *ast.File) bool { return f != nil && pass.Fset.File(f.FileStart).Name() == filename })
		if !ok {
			return nil, fmt.Errorf("Pass.ReadFile: %s is not among OtherFiles, IgnoredFiles, or names of Files", filename)
		}
		return os.ReadFile(filename)
	}
}

// resolveURL is the URL a driver gives a diagnostic: its own, resolved
// against the analyzer's, or "#category" resolved against it.
func resolveURL(a *analysis.Analyzer, d analysis.Diagnostic) (string, error) {
	if d.URL == "" && d.Category == "" && a.URL == "" {
		return "", nil
	}
	raw := d.URL
	if d.URL == "" && d.Category != "" {
		raw = "#" + d.Category
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("invalid Diagnostic.URL %q: %s", raw, err)
	}
	base, err := url.Parse(a.URL)
	if err != nil {
		return "", fmt.Errorf("invalid Analyzer.URL %q: %s", a.URL, err)
	}
	return base.ResolveReference(u).String(), nil
}
