package analyzer

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
)

// addDecl records the body of a function declaration.
func (vi *valueIndex) addDecl(fd *ast.FuncDecl, self *types.Func) *fnBody {
	fb := &fnBody{body: fd.Body, self: self, typ: fd.Type, stores: &vi.stores, from: len(vi.stores.all)}
	vi.add(fb)
	if self != nil {
		vi.byFunc[self] = fb
	}
	return fb
}

// addLit records the body of a function literal.
func (vi *valueIndex) addLit(lit *ast.FuncLit) *fnBody {
	fb := &fnBody{body: lit.Body, lit: lit, typ: lit.Type, stores: &vi.stores, from: len(vi.stores.all)}
	vi.add(fb)
	return fb
}

func (vi *valueIndex) add(fb *fnBody) {
	vi.bodies[fb.body] = fb
	vi.list = append(vi.list, fb)
	if s := vi.info.Scopes[fb.typ]; s != nil {
		vi.byScope[s] = fb
	} else {
		vi.scopeless = true
	}
}

// declBody returns the body of the declaration of fn in this package, or
// nil.
func (vi *valueIndex) declBody(fn *types.Func) *fnBody {
	return vi.byFunc[fn]
}

// innermost returns the function body enclosing the top of stack.
func (vi *valueIndex) innermost(stack []ast.Node) *fnBody {
	for i := len(stack) - 1; i >= 0; i-- {
		switch n := stack[i].(type) {
		case *ast.FuncLit:
			return vi.bodies[n.Body]
		case *ast.FuncDecl:
			return vi.bodies[n.Body]
		}
	}
	return nil
}

// bodyOf returns the body of the function that declares the local variable
// v: the innermost body recorded so far that contains v's declaration,
// else, for a parameter or result, the body of the function whose type
// declares it. (The parameter of a function literal belongs to the body
// around the literal.) It follows v's scopes up to the function scopes
// of the bodies recorded.
func (vi *valueIndex) bodyOf(v *types.Var) *ast.BlockStmt {
	if v == nil {
		return nil
	}
	if vi.scopeless || v.Parent() == nil {
		return vi.searchBodyOf(v)
	}
	var typed *ast.BlockStmt
	for s := v.Parent(); s != nil; s = s.Parent() {
		fb := vi.byScope[s]
		if fb == nil {
			continue
		}
		if fb.body.Pos() <= v.Pos() && v.Pos() < fb.body.End() {
			return fb.body
		}
		if typed == nil && fb.typed() && fb.typ.Pos() <= v.Pos() && v.Pos() < fb.typ.End() {
			typed = fb.body
		}
	}
	return typed
}

// searchBodyOf is bodyOf by a search of every body, for when the scopes
// are not known.
func (vi *valueIndex) searchBodyOf(v *types.Var) *ast.BlockStmt {
	var best *ast.BlockStmt
	for _, fb := range vi.list {
		if body := fb.body; body.Pos() <= v.Pos() && v.Pos() < body.End() && (best == nil || body.Pos() > best.Pos()) {
			best = body
		}
	}
	if best != nil {
		return best
	}
	for _, fb := range vi.list {
		if fb.typed() && fb.typ.Pos() <= v.Pos() && v.Pos() < fb.typ.End() {
			return fb.body
		}
	}
	return nil
}

// enclosingDecl returns the declared function whose body holds lit, or
// nil (a literal at package level).
func (vi *valueIndex) enclosingDecl(lit *ast.FuncLit) *types.Func {
	for _, d := range vi.list {
		if d.self != nil && d.body.Pos() <= lit.Pos() && lit.End() <= d.body.End() {
			return d.self // declarations do not nest
		}
	}
	return nil
}

// litName names the function literal lit for a message: "the function
// literal at line 12 in (*Relay).Start" (qualified by package name unless
// pkg is its own), "at line 12" alone at package level.
func (vi *valueIndex) litName(pkg *types.Package, fset *token.FileSet, lit *ast.FuncLit) string {
	name := fmt.Sprintf("the function literal at line %d", fset.Position(lit.Pos()).Line)
	if fn := vi.enclosingDecl(lit); fn != nil {
		name += " in " + funcName(pkg, fn)
	}
	return name
}

// typed reports whether bodyOf looks for parameters in fb's type: a
// literal's, or a declaration's with its function known.
func (fb *fnBody) typed() bool { return fb.lit != nil || fb.self != nil }
