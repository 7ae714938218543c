package main

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/packages"
)

// natsModule is the import path prefix of nats.go. The analyzer's facts
// say which functions send; only a package that imports nats.go, directly
// or through other packages, can have one.
const natsModule = "github.com/nats-io/nats.go"

// loadMode is what load asks go/packages for: the import graph with each
// package's files and compiler export data (go list -deps -export), no
// types: load type-checks itself, choosing per package.
const loadMode = packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles |
	packages.NeedImports | packages.NeedDeps | packages.NeedExportFile |
	packages.NeedTypesSizes | packages.NeedModule

// load loads the packages matching patterns for the analyzer. The named
// packages, every dependency that can send (one that imports nats.go
// directly or indirectly, outside nats.go itself) and the main module's
// packages a named one imports (where the analyzer also infers facts
// without NATS: functions that do not return, retry helpers) are parsed
// and type-checked from source so that the analyzer runs on them and
// passes its facts up; every other dependency (the standard library,
// nats.go, other modules' packages that do not use NATS) is read from the
// compiler's export data, only as far as a source package imports it, as a
// fact-free checker does.
//
// It returns the named packages with their Imports edges pruned to the
// packages loaded from source: the graph go/analysis/checker would run
// on, without twins (twins.go), whose facts checker could not find. (The
// driver analyzes the packages while it loads them: see analyzeHere.)
//
// With all set, every package is loaded from source (what a singlechecker
// does for an analyzer with facts): for an analyzer that depends on the
// facts of another analyzer about packages that cannot send.
func load(cfg *packages.Config, patterns []string, all bool) ([]*packages.Package, error) {
	l, roots, err := newLoader(cfg, patterns, all, false)
	if err != nil {
		return nil, err
	}
	l.check(nil)
	return l.pkgs(roots), nil
}

// newLoader lists the packages matching patterns and decides how each is
// loaded (see load), with twins (twins.go) unless twins is false; it
// returns the loader and the named packages' nodes.
func newLoader(cfg *packages.Config, patterns []string, all, twins bool) (*loader, []*node, error) {
	cfg.Mode = loadMode
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, nil, err
	}
	l := &loader{fset: token.NewFileSet(), nodes: make(map[*packages.Package]*node)}
	roots := make([]*node, len(pkgs))
	for i, p := range pkgs {
		roots[i] = l.node(p)
		roots[i].root = true
	}
	l.mark(all)
	if twins {
		l.markTwins(all)
	}
	return l, roots, nil
}

// pkgs returns the packages of nodes as go/analysis/checker is to see
// them (loader.pkg).
func (l *loader) pkgs(nodes []*node) []*packages.Package {
	out := make([]*packages.Package, len(nodes))
	for i, n := range nodes {
		out[i] = l.pkg(n)
	}
	return out
}

// loader holds one load's package graph.
type loader struct {
	fset     *token.FileSet
	nodes    map[*packages.Package]*node
	order    []*node    // every node, dependencies first
	exportMu sync.Mutex // serializes gcexportdata, which fills the shared types.Packages
	twins    twinMap    // each twin's source package (twins.go)
}

// node is one package of the graph.
type node struct {
	p       *packages.Package
	root    bool
	source  bool // parsed and type-checked from source
	imports []*node
	types   *types.Package // created up front, filled by export data or the type checker
	info    *types.Info
	files   []*ast.File
	errs    []packages.Error
	done    chan struct{} // closed once a source package is checked
	loaded  bool          // export data read (under exportMu)
	// twinned: a dependency checked from source, for its facts, whose
	// importers in the named packages' universe read it from export
	// data instead, as twin (twins.go).
	twinned    bool
	twin       *types.Package
	twinLoaded bool // twin's export data read (under exportMu)
	// viaExport: a package read from export data that n imports, directly
	// or not, imports a source package (a package of the module that is
	// not named, importing one that is): rare, so sourceDeps only walks
	// export data packages when it is set.
	viaExport bool
	out       *packages.Package
}

func (l *loader) node(p *packages.Package) *node {
	if n, ok := l.nodes[p]; ok {
		return n
	}
	n := &node{p: p, done: make(chan struct{})}
	l.nodes[p] = n
	if p.PkgPath == "unsafe" {
		n.types = types.Unsafe
		n.loaded = true
	} else {
		// One types.Package per package, created before any export data
		// is read, so that every reader shares it (as go/packages does).
		n.types = types.NewPackage(p.PkgPath, p.Name)
	}
	for _, path := range sortedKeys(p.Imports) {
		n.imports = append(n.imports, l.node(p.Imports[path]))
	}
	l.order = append(l.order, n)
	return n
}

// mark decides which packages are loaded from source: the named ones,
// those that import nats.go, directly or not, outside nats.go, and those of
// the main module; or, with all, every package but unsafe.
func (l *loader) mark(all bool) {
	reaches := make(map[*node]bool)
	for _, n := range l.order { // dependencies first
		r := strings.HasPrefix(n.p.PkgPath, natsModule) && (len(n.p.PkgPath) == len(natsModule) || n.p.PkgPath[len(natsModule)] == '/')
		inNATS := r
		for _, d := range n.imports {
			r = r || reaches[d]
		}
		reaches[n] = r
		n.source = n.root || (r && !inNATS) || local(n.p) && !generated(n.p) || (all && n.p.PkgPath != "unsafe")
	}
	for _, n := range l.order {
		for _, d := range n.imports {
			n.viaExport = n.viaExport || (!d.source && (d.viaExport || hasSourceImport(d)))
		}
	}
}

// local reports whether p belongs to a main module (a module without a
// version; in GOPATH mode, any package outside the Go root): the analyzer
// infers facts there even without NATS (functions that do not return,
// retry helpers; analyzer.inferHere), so such a package is loaded from
// source whenever a named package depends on it, as go vet would analyze
// it. It tells the standard library by the first file's directory, as the
// analyzer does.
func local(p *packages.Package) bool {
	if p.Module != nil {
		return p.Module.Version == ""
	}
	if p.PkgPath == "unsafe" || len(p.CompiledGoFiles) == 0 {
		return false
	}
	root := build.Default.GOROOT
	return root != "" && !strings.HasPrefix(filepath.ToSlash(p.CompiledGoFiles[0]), filepath.ToSlash(root)+"/")
}

// generated reports whether every Go file of p is generated code ("//
// Code generated ... DO NOT EDIT." before its package clause): a package
// of the main module the analyzer infers no facts in when it does not
// use NATS (analyzer.inferHere), so one that is not named is read from
// export data. Only the files' headers are read.
func generated(p *packages.Package) bool {
	if len(p.CompiledGoFiles) == 0 {
		return false
	}
	fset := token.NewFileSet()
	for _, name := range p.CompiledGoFiles {
		f, err := parser.ParseFile(fset, name, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil || !ast.IsGenerated(f) {
			return false
		}
	}
	return true
}

func hasSourceImport(n *node) bool {
	return slices.ContainsFunc(n.imports, func(d *node) bool { return d.source })
}

// pkg returns n as go/analysis/checker is to see it: loaded from source,
// with its imports pruned to the packages loaded from source (the only
// ones the analyzer runs on and has facts from).
func (l *loader) pkg(n *node) *packages.Package {
	if n.out != nil {
		return n.out
	}
	p := n.p
	n.out = &packages.Package{
		ID: p.ID, Name: p.Name, PkgPath: p.PkgPath, Module: p.Module,
		GoFiles: p.GoFiles, CompiledGoFiles: p.CompiledGoFiles, OtherFiles: p.OtherFiles,
		EmbedFiles: p.EmbedFiles, IgnoredFiles: p.IgnoredFiles, ExportFile: p.ExportFile,
		Errors: n.errs, Fset: l.fset, Types: n.types, TypesInfo: n.info, Syntax: n.files,
		TypesSizes: p.TypesSizes, IllTyped: len(n.errs) > 0,
		Imports: make(map[string]*packages.Package),
	}
	for path, ip := range p.Imports {
		if d := l.nodes[ip]; d.source {
			n.out.Imports[path] = l.pkg(d)
		}
	}
	return n.out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// needsAllFacts reports whether a, or an analyzer it requires, depends on
// facts that packages unable to send may carry: an analyzer other than a
// itself that declares fact types (x/tools' ctrlflow, for one, has facts
// about functions that never return in any package). Then load must load
// every package from source to give the same results as go vet.
func needsAllFacts(a *analysis.Analyzer) bool {
	seen := make(map[*analysis.Analyzer]bool)
	var visit func(r *analysis.Analyzer) bool
	visit = func(r *analysis.Analyzer) bool {
		if seen[r] {
			return false
		}
		seen[r] = true
		if r != a && len(r.FactTypes) > 0 {
			return true
		}
		return slices.ContainsFunc(r.Requires, visit)
	}
	return visit(a)
}
