package main

import (
	"go/types"
	"log"
	"reflect"
	"sync"

	"golang.org/x/tools/go/analysis"
)

// factStore holds every fact of a run, shared by all packages: the source
// packages form one universe of types (the twins aside, which are mapped
// to it), so a fact is found by its object and type. go/analysis/checker
// instead copies each dependency's facts into every package that imports
// it; which of them a package sees is kept here by visible.
type factStore struct {
	mu   sync.RWMutex
	objs map[objectFactKey]analysis.Fact
	pkgs map[packageFactKey]analysis.Fact
	src  sourceObjects
	// index numbers the source packages, for the sets of dependencies.
	index map[*types.Package]int
}

type objectFactKey struct {
	obj types.Object
	typ reflect.Type
}

type packageFactKey struct {
	pkg *types.Package
	typ reflect.Type
}

// deps is what one package's analysis sees of the others: the source
// packages it imports and, transitively, those they import (as bit sets
// over factStore.index).
type deps struct {
	own            *types.Package
	direct, transv bitset
}

type bitset []uint64

func (b bitset) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }
func (b bitset) set(i int)      { b[i/64] |= 1 << (i % 64) }
func (b bitset) or(c bitset) {
	for i := range b {
		b[i] |= c[i]
	}
}

// visible reports whether a fact about obj, a source object, reaches the
// package of d, as go/analysis/checker passes facts along its import
// edges (its exportedFrom): a package's own facts; for a method, a
// struct field, a type name or a constant, the facts of any package it
// depends on; for an exported package-level function or a package-level
// variable, the facts of a package it imports directly.
func (s *factStore) visible(d *deps, obj types.Object) bool {
	pkg := obj.Pkg()
	if pkg == d.own {
		return true
	}
	i, ok := s.index[pkg]
	if !ok {
		return false
	}
	switch obj := obj.(type) {
	case *types.Func:
		if obj.Signature().Recv() != nil {
			return d.transv.has(i)
		}
		return obj.Exported() && d.direct.has(i)
	case *types.Var:
		if obj.IsField() {
			return d.transv.has(i)
		}
		return d.direct.has(i)
	case *types.TypeName, *types.Const:
		return d.transv.has(i)
	}
	return false
}

// importObject implements Pass.ImportObjectFact for the package of d.
func (s *factStore) importObject(d *deps, obj types.Object, ptr analysis.Fact) bool {
	if obj == nil {
		panic("nil object")
	}
	if s.src.twins[obj.Pkg()] != nil {
		if obj = s.src.of(obj); obj == nil {
			return false
		}
	}
	if !s.visible(d, obj) {
		return false
	}
	s.mu.RLock()
	v, ok := s.objs[objectFactKey{obj, reflect.TypeOf(ptr)}]
	s.mu.RUnlock()
	if ok {
		reflect.ValueOf(ptr).Elem().Set(reflect.ValueOf(v).Elem())
	}
	return ok
}

// exportObject implements Pass.ExportObjectFact for the package of d.
func (s *factStore) exportObject(a *analysis.Analyzer, d *deps, obj types.Object, fact analysis.Fact) {
	if obj.Pkg() != d.own {
		log.Panicf("internal error: in analysis %s of package %s: Fact.Set(%s, %T): can't set facts on objects belonging another package",
			a, d.own.Path(), obj, fact)
	}
	s.mu.Lock()
	s.objs[objectFactKey{obj, reflect.TypeOf(fact)}] = fact
	s.mu.Unlock()
}

// importPackage implements Pass.ImportPackageFact for the package of d:
// package facts pass along every import edge.
func (s *factStore) importPackage(d *deps, pkg *types.Package, ptr analysis.Fact) bool {
	if pkg == nil {
		panic("nil package")
	}
	if src := s.src.twins[pkg]; src != nil {
		pkg = src
	}
	if i, ok := s.index[pkg]; pkg != d.own && (!ok || !d.transv.has(i)) {
		return false
	}
	s.mu.RLock()
	v, ok := s.pkgs[packageFactKey{pkg, reflect.TypeOf(ptr)}]
	s.mu.RUnlock()
	if ok {
		reflect.ValueOf(ptr).Elem().Set(reflect.ValueOf(v).Elem())
	}
	return ok
}

// exportPackage implements Pass.ExportPackageFact for the package of d.
func (s *factStore) exportPackage(d *deps, fact analysis.Fact) {
	s.mu.Lock()
	s.pkgs[packageFactKey{d.own, reflect.TypeOf(fact)}] = fact
	s.mu.Unlock()
}

// all implements Pass.AllObjectFacts and Pass.AllPackageFacts for a's
// analysis of the package of d.
func (s *factStore) all(a *analysis.Analyzer, d *deps) ([]analysis.ObjectFact, []analysis.PackageFact) {
	types := make(map[reflect.Type]bool, len(a.FactTypes))
	for _, f := range a.FactTypes {
		types[reflect.TypeOf(f)] = true
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var objs []analysis.ObjectFact
	for k, f := range s.objs {
		if types[k.typ] && s.visible(d, k.obj) {
			objs = append(objs, analysis.ObjectFact{Object: k.obj, Fact: f})
		}
	}
	var pkgs []analysis.PackageFact
	for k, f := range s.pkgs {
		if i, ok := s.index[k.pkg]; types[k.typ] && (k.pkg == d.own || ok && d.transv.has(i)) {
			pkgs = append(pkgs, analysis.PackageFact{Package: k.pkg, Fact: f})
		}
	}
	return objs, pkgs
}
