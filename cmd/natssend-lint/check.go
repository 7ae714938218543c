package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"runtime"
	"sync"

	"golang.org/x/tools/go/gcexportdata"
	"golang.org/x/tools/go/packages"
)

// check type-checks the source packages, in parallel, each once its
// dependencies are done; with r, it also runs r's analysis of each
// package once the package and its dependencies allow (run.analyze).
// Type checks and analyses share GOMAXPROCS slots.
func (l *loader) check(r *run) {
	sem := newSlots(runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, n := range l.order {
		if !n.source {
			continue
		}
		wg.Go(func() {
			for _, d := range l.sourceDeps(n) {
				if n.twinned || !d.twinned {
					<-d.done
				}
			}
			sem.acquire(checking)
			l.checkOne(n)
			sem.release()
			close(n.done)
			if r != nil {
				r.analyze(n, sem)
			}
		})
	}
	wg.Wait()
}

// sourceDeps returns the source packages n depends on, directly or through
// packages read from export data (whose export data may refer to them).
func (l *loader) sourceDeps(n *node) []*node {
	var deps []*node
	seen := make(map[*node]bool)
	var visit func(*node)
	visit = func(m *node) {
		for _, d := range m.imports {
			if seen[d] {
				continue
			}
			seen[d] = true
			if d.source {
				deps = append(deps, d)
			} else if d.viaExport || hasSourceImport(d) {
				visit(d)
			}
		}
	}
	visit(n)
	return deps
}

// checkOne parses and type-checks a source package into its types.Package.
func (l *loader) checkOne(n *node) {
	p := n.p
	n.errs = append(n.errs, p.Errors...)
	files := make([]*ast.File, len(p.CompiledGoFiles))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	for i, name := range p.CompiledGoFiles {
		wg.Go(func() {
			src, err := os.ReadFile(name)
			if err == nil {
				files[i], err = parser.ParseFile(l.fset, name, src, parser.AllErrors|parser.ParseComments|parser.SkipObjectResolution)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			n.errs = append(n.errs, packages.Error{Pos: p.CompiledGoFiles[i], Msg: err.Error(), Kind: packages.ParseError})
		}
		if files[i] != nil {
			n.files = append(n.files, files[i])
		}
	}
	// Sized from the code's bytes, the maps do not grow (and rehash)
	// while the checker fills them: on natscli that growth was 15 % of the
	// run's CPU time. The ratios are those of real modules (jsm.go,
	// natscli, nack: 6-12 types, 4-8 uses per 100 bytes of code); a
	// package above them grows once, at the end.
	code := codeBytes(l.fset, n.files)
	n.info = &types.Info{
		Types:        make(map[ast.Expr]types.TypeAndValue, code/9),
		Defs:         make(map[*ast.Ident]types.Object, code/50),
		Uses:         make(map[*ast.Ident]types.Object, code/12),
		Implicits:    make(map[ast.Node]types.Object),
		Instances:    make(map[*ast.Ident]types.Instance),
		Scopes:       make(map[ast.Node]*types.Scope, code/80),
		Selections:   make(map[*ast.SelectorExpr]*types.Selection, code/50),
		FileVersions: make(map[*ast.File]string, len(n.files)),
	}
	byPath := make(map[string]*node, len(n.imports))
	for path, ip := range p.Imports {
		byPath[path] = l.nodes[ip]
	}
	conf := &types.Config{
		Sizes: p.TypesSizes,
		Importer: importerFunc(func(path string) (*types.Package, error) {
			d, ok := byPath[path]
			if !ok {
				return nil, fmt.Errorf("no metadata for import %q of %s", path, p.ID)
			}
			if d.twinned && !n.twinned {
				if err := l.readTwin(d); err != nil {
					return nil, err
				}
				return d.twin, nil
			}
			if !d.source {
				if err := l.readExport(d); err != nil {
					return nil, err
				}
			}
			return d.types, nil
		}),
		Error: func(err error) {
			n.errs = append(n.errs, typeError(err))
		},
	}
	if p.Module != nil && p.Module.GoVersion != "" {
		conf.GoVersion = "go" + p.Module.GoVersion
	}
	_ = types.NewChecker(conf, l.fset, n.types, n.info).Files(n.files)
	n.types.MarkComplete()
}

// codeBytes is the size of files without their comments.
func codeBytes(fset *token.FileSet, files []*ast.File) int {
	b := 0
	for _, f := range files {
		b += fset.File(f.FileStart).Size()
		for _, c := range f.Comments {
			b -= int(c.End() - c.Pos())
		}
	}
	return b
}

// readExport fills d's types.Package from its export data, once.
func (l *loader) readExport(d *node) error {
	l.exportMu.Lock()
	defer l.exportMu.Unlock()
	if d.loaded {
		return nil
	}
	if err := l.readInto(d, d.types, func(i *node) *types.Package { return i.types }); err != nil {
		return err
	}
	d.loaded = true
	return nil
}

// readInto reads d's export data into pkg, with the packages it may
// mention given by universe (under exportMu).
func (l *loader) readInto(d *node, pkg *types.Package, universe func(*node) *types.Package) error {
	if d.p.ExportFile == "" {
		return fmt.Errorf("no export data for %s", d.p.ID)
	}
	f, err := os.Open(d.p.ExportFile)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // read only: nothing is lost on a failed close
	// go/packages reads go list -export files the same way (loadFromExportData).
	r, err := gcexportdata.NewReader(f) //nolint:staticcheck // SA1019: as go/packages does, for go list -export files
	if err != nil {
		return fmt.Errorf("reading export data of %s: %v", d.p.ID, err)
	}
	// The view gcexportdata sees: every package d may mention, by path.
	view := make(map[string]*types.Package)
	seen := make(map[*node]bool)
	var visit func(*node)
	visit = func(m *node) {
		for _, i := range m.imports {
			if !seen[i] {
				seen[i] = true
				view[i.p.PkgPath] = universe(i)
				visit(i)
			}
		}
	}
	visit(d)
	view[d.p.PkgPath] = pkg
	if _, err := gcexportdata.Read(r, l.fset, view, d.p.PkgPath); err != nil {
		return fmt.Errorf("reading export data of %s: %v", d.p.ID, err)
	}
	return nil
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// typeError converts a type-checking error to a packages.Error.
func typeError(err error) packages.Error {
	if te, ok := err.(types.Error); ok {
		return packages.Error{Pos: te.Fset.Position(te.Pos).String(), Msg: te.Msg, Kind: packages.TypeError}
	}
	return packages.Error{Pos: "-", Msg: err.Error(), Kind: packages.TypeError}
}
