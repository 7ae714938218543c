package main

import (
	"go/types"
	"sync"

	"golang.org/x/tools/go/types/objectpath"
)

// Twins: a dependency that is type-checked from source only for its facts
// (a package of another module that uses NATS, or a package of the main
// module that is not named) is, for the named packages, read from the
// compiler's export data, as the fact-free floor reads it. The named
// packages then need not wait for the dependency's source to be
// type-checked: on natscli, whose largest package imports a chain of
// jsm.go's packages, that wait was a fifth of the run. The dependency is
// still type-checked from source, at the same time, and analyzed first;
// the named packages' analysis finds its facts by mapping each object of
// the export data twin to the same object of the source package
// (objectpath, as go vet's facts travel between processes; facts.go).
//
// There are then two universes of types: the twinned dependencies from
// source, among themselves; and the named packages (with the other source
// packages) seeing the twins. A dependency is twinned when it is loaded
// from source but not named, has export data, and its source imports are
// all twinned (so it depends on no named package: a package in both
// universes would have two identities). Nothing is twinned when a package
// read from export data imports one loaded from source (viaExport), or
// when every package is loaded from source (load's all).

// markTwins decides which source packages are twinned.
func (l *loader) markTwins(all bool) {
	if all {
		return
	}
	for _, n := range l.order {
		if n.viaExport {
			return
		}
	}
	for _, n := range l.order { // dependencies first
		if !n.source || n.root || n.p.ExportFile == "" {
			continue
		}
		n.twinned = true
		for _, d := range n.imports {
			if d.source && !d.twinned {
				n.twinned = false
				break
			}
		}
		if n.twinned {
			n.twin = types.NewPackage(n.p.PkgPath, n.p.Name)
			if l.twins == nil {
				l.twins = make(twinMap)
			}
			l.twins[n.twin] = n.types
		}
	}
}

// readTwin fills d's twin from its export data, once, and first those of
// the twinned packages it depends on, deepest first: a twin is complete
// before any package can see it, so that nothing reads a twin's scope
// while export data is still being read into it (gcexportdata adds to the
// twins a package's export data mentions). Each twin is given its
// package's imports: export data lists only the packages whose objects it
// mentions, and the analyzer walks the import graph.
func (l *loader) readTwin(d *node) error {
	l.exportMu.Lock()
	defer l.exportMu.Unlock()
	return l.fillTwin(d)
}

// fillTwin is readTwin under exportMu.
func (l *loader) fillTwin(d *node) error {
	if d.twinLoaded {
		return nil
	}
	for _, m := range d.imports {
		if m.twinned {
			if err := l.fillTwin(m); err != nil {
				return err
			}
		}
	}
	if err := l.readInto(d, d.twin, twinOrShared); err != nil {
		return err
	}
	imports := make([]*types.Package, len(d.imports))
	for i, m := range d.imports {
		imports[i] = twinOrShared(m)
	}
	d.twin.SetImports(imports)
	d.twinLoaded = true
	return nil
}

// twinOrShared is the package the named packages' universe has for n.
func twinOrShared(n *node) *types.Package {
	if n.twinned {
		return n.twin
	}
	return n.types
}

// twinMap maps each twin to its source package.
type twinMap map[*types.Package]*types.Package

// sourceObjects finds the source object of a twin's object, once each.
type sourceObjects struct {
	twins twinMap
	enc   objectpath.Encoder
	found sync.Map // types.Object -> types.Object, nil when it has none
}

// of returns the object of obj's source package that obj stands for, or
// nil if obj has no object path (a local object, which no other package
// can name and so has no fact).
func (s *sourceObjects) of(obj types.Object) types.Object {
	if v, ok := s.found.Load(obj); ok {
		src, _ := v.(types.Object)
		return src
	}
	var src types.Object
	if path, err := s.enc.For(obj); err == nil {
		src, _ = objectpath.Object(s.twins[obj.Pkg()], path)
	}
	s.found.Store(obj, src)
	return src
}
