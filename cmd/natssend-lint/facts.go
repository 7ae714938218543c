package main

import (
	"go/types"
	"log"
	"reflect"
	"sync"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/objectpath"
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
	// twins maps a twin's objects to their source objects; twinOf maps
	// a twinned source package to its twin, and enc encodes its objects'
	// paths, for AllObjectFacts in the twins' universe.
	twins  sourceObjects
	twinOf map[*types.Package]*types.Package
	enc    objectpath.Encoder
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

// pkgView is what one package's analysis sees of the others: the source
// packages it imports and, transitively, those they import (as bit sets
// over factStore.index).
type pkgView struct {
	id             string // the package's ID
	own            *types.Package
	main           bool // in the named packages' universe, which sees the twins
	direct, transv bitset
}

// factView is one analyzer's pkgView: it sees its own fact types only.
type factView struct {
	*pkgView
	analyzer *analysis.Analyzer
	types    map[reflect.Type]bool
}

// bitset is a set of small integers.
type bitset []uint64

func (b bitset) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }
func (b bitset) set(i int)      { b[i/64] |= 1 << (i % 64) }
func (b bitset) or(c bitset) {
	for i := range b {
		b[i] |= c[i]
	}
}

// factType is the key of fact's type, as checker's factType: a fact is a
// pointer.
func factType(fact analysis.Fact) reflect.Type {
	t := reflect.TypeOf(fact)
	if t.Kind() != reflect.Pointer {
		log.Fatalf("invalid Fact type: got %T, want pointer", fact)
	}
	return t
}

// visible reports whether a fact about obj, a source object, reaches the
// package of v, as go/analysis/checker passes facts along its import
// edges (its exportedFrom): a package's own facts; for a method, a
// struct field, a type name or a constant, the facts of any package it
// depends on; for an exported package-level function or a package-level
// variable, the facts of a package it imports directly.
func (s *factStore) visible(v *pkgView, obj types.Object) bool {
	pkg := obj.Pkg()
	if pkg == v.own {
		return true
	}
	i, ok := s.index[pkg]
	if !ok {
		return false
	}
	switch obj := obj.(type) {
	case *types.Func:
		if obj.Signature().Recv() != nil {
			return v.transv.has(i)
		}
		return obj.Exported() && v.direct.has(i)
	case *types.Var:
		if obj.IsField() {
			return v.transv.has(i)
		}
		return v.direct.has(i)
	case *types.TypeName, *types.Const:
		return v.transv.has(i)
	}
	return false
}

// sees reports whether pkg's package facts reach the package of v: they
// pass along every import edge.
func (s *factStore) sees(v *pkgView, pkg *types.Package) bool {
	i, ok := s.index[pkg]
	return pkg == v.own || ok && v.transv.has(i)
}

// importObject implements Pass.ImportObjectFact.
func (s *factStore) importObject(v *factView, obj types.Object, ptr analysis.Fact) bool {
	if obj == nil {
		panic("nil object")
	}
	typ := factType(ptr)
	if !v.types[typ] {
		return false
	}
	if s.twins.twins[obj.Pkg()] != nil {
		if obj = s.twins.of(obj); obj == nil {
			return false
		}
	}
	if !s.visible(v.pkgView, obj) {
		return false
	}
	return lookup(&s.mu, s.objs, objectFactKey{obj, typ}, ptr)
}

// exportObject implements Pass.ExportObjectFact.
func (s *factStore) exportObject(v *factView, obj types.Object, fact analysis.Fact) {
	if obj.Pkg() != v.own {
		log.Panicf("internal error: in analysis %s of package %s: Fact.Set(%s, %T): can't set facts on objects belonging another package",
			v.analyzer, v.id, obj, fact)
	}
	key := objectFactKey{obj, factType(fact)}
	s.mu.Lock()
	s.objs[key] = fact
	s.mu.Unlock()
}

// importPackage implements Pass.ImportPackageFact.
func (s *factStore) importPackage(v *factView, pkg *types.Package, ptr analysis.Fact) bool {
	if pkg == nil {
		panic("nil package")
	}
	typ := factType(ptr)
	if src := s.twins.twins[pkg]; src != nil {
		pkg = src
	}
	if !v.types[typ] || !s.sees(v.pkgView, pkg) {
		return false
	}
	return lookup(&s.mu, s.pkgs, packageFactKey{pkg, typ}, ptr)
}

// lookup copies the fact stored under k, if any, into ptr, as checker's
// ObjectFact and PackageFact do, and reports whether there was one.
func lookup[K comparable](mu *sync.RWMutex, facts map[K]analysis.Fact, k K, ptr analysis.Fact) bool {
	mu.RLock()
	f, ok := facts[k]
	mu.RUnlock()
	if ok {
		reflect.ValueOf(ptr).Elem().Set(reflect.ValueOf(f).Elem())
	}
	return ok
}

// exportPackage implements Pass.ExportPackageFact.
func (s *factStore) exportPackage(v *factView, fact analysis.Fact) {
	key := packageFactKey{v.own, factType(fact)}
	s.mu.Lock()
	s.pkgs[key] = fact
	s.mu.Unlock()
}

// allObjects implements Pass.AllObjectFacts. In the named packages'
// universe a twinned package's objects are given as its twin's, which
// that universe holds; an object without a path in the twin (none that
// the package can name) is left out.
func (s *factStore) allObjects(v *factView) []analysis.ObjectFact {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var objs []analysis.ObjectFact
	for k, f := range s.objs {
		if !v.types[k.typ] || !s.visible(v.pkgView, k.obj) {
			continue
		}
		obj := k.obj
		if twin := s.twinOf[obj.Pkg()]; v.main && twin != nil {
			if obj = s.twinObject(twin, obj); obj == nil {
				continue
			}
		}
		objs = append(objs, analysis.ObjectFact{Object: obj, Fact: f})
	}
	return objs
}

// allPackages implements Pass.AllPackageFacts, a twinned package given
// as its twin in the named packages' universe. It does not walk the
// object facts: the analyzer asks for package facts in many packages.
func (s *factStore) allPackages(v *factView) []analysis.PackageFact {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var pkgs []analysis.PackageFact
	for k, f := range s.pkgs {
		if !v.types[k.typ] || !s.sees(v.pkgView, k.pkg) {
			continue
		}
		pkg := k.pkg
		if twin := s.twinOf[pkg]; v.main && twin != nil {
			pkg = twin
		}
		pkgs = append(pkgs, analysis.PackageFact{Package: pkg, Fact: f})
	}
	return pkgs
}

// twinObject returns the object of twin that obj, a source object, stands
// for, or nil.
func (s *factStore) twinObject(twin *types.Package, obj types.Object) types.Object {
	path, err := s.enc.For(obj)
	if err != nil {
		return nil
	}
	t, _ := objectpath.Object(twin, path)
	return t
}
