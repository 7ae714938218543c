package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"
)

// invariance decides whether an expression has the same value on every
// run of a region of code (nodes of a function body's control-flow graph,
// or the body itself).
type invariance struct {
	info   *types.Info
	idx    *assignIndex // of the body the region is in
	region []ast.Node
	lit    *ast.FuncLit
}

// fixed reports whether e has the same value each time the region runs:
// constants, package-level variables, variables not assigned in the region
// (or assigned once there from a fixed expression), and pure functions of
// those.
func (inv *invariance) fixed(e ast.Expr, depth int) bool {
	if depth > 8 {
		return false
	}
	info := inv.info
	if tv, ok := info.Types[e]; ok && tv.Value != nil {
		return true
	}
	switch x := e.(type) {
	case *ast.ParenExpr:
		return inv.fixed(x.X, depth+1)
	case *ast.BinaryExpr:
		return inv.fixed(x.X, depth+1) && inv.fixed(x.Y, depth+1)
	case *ast.UnaryExpr:
		return x.Op != token.ARROW && x.Op != token.AND && inv.fixed(x.X, depth+1)
	case *ast.SelectorExpr:
		if _, ok := info.Uses[x.Sel].(*types.Var); ok && info.Selections[x] == nil {
			return true // a package-level variable of another package
		}
		return info.Selections[x] != nil && info.Selections[x].Kind() == types.FieldVal && inv.fixed(x.X, depth+1)
	case *ast.IndexExpr:
		return inv.fixed(x.X, depth+1) && inv.fixed(x.Index, depth+1)
	case *ast.SliceExpr:
		for _, e := range []ast.Expr{x.X, x.Low, x.High, x.Max} {
			if e != nil && !inv.fixed(e, depth+1) {
				return false
			}
		}
		return true
	case *ast.CallExpr:
		if tv, ok := info.Types[x.Fun]; ok && tv.IsType() && len(x.Args) == 1 {
			return inv.fixed(x.Args[0], depth+1) // a conversion
		}
		if !pureFunc(funcKey(calleeFunc(inv.info, x))) {
			return false
		}
		for _, a := range x.Args {
			if !inv.fixed(a, depth+1) {
				return false
			}
		}
		return true
	case *ast.Ident:
		v, ok := info.Uses[x].(*types.Var)
		if !ok {
			return false
		}
		if v.Pkg() != nil && v.Parent() == v.Pkg().Scope() {
			return true
		}
		if inv.lit != nil && inv.lit.Type.Pos() <= v.Pos() && v.Pos() < inv.lit.Type.End() {
			return false // a parameter of the retried literal
		}
		rhs, n := inv.assignments(v)
		switch n {
		case 0:
			return true
		case 1:
			return rhs != nil && inv.fixed(rhs, depth+1)
		}
	}
	return false
}

// assignments counts the assignments to v in the region (x++ too, and
// taking its address twice), returning the right-hand side when there is
// exactly one simple one. It reads the stores within each region node from
// the body's index.
func (inv *invariance) assignments(v *types.Var) (ast.Expr, int) {
	var rhs ast.Expr
	n := 0
	count := func(a *assignment) {
		if a.v != v || !a.whole {
			return
		}
		switch a.node.(type) {
		case *ast.AssignStmt, *ast.ValueSpec:
			n++
			rhs = nil
			if a.tok == token.DEFINE || a.tok == token.ASSIGN {
				rhs = a.rhs
			}
		case *ast.IncDecStmt:
			n++
		case *ast.UnaryExpr:
			n += 2 // its address escapes: never fixed
		}
	}
	for _, node := range inv.region {
		if as, ok := node.(*ast.AssignStmt); ok && len(as.Rhs) == 0 {
			// The key and value a range loop assigns (pathResult.region).
			for _, l := range as.Lhs {
				if id, ok := ast.Unparen(l).(*ast.Ident); ok && inv.info.ObjectOf(id) == v {
					n++
					rhs = nil
				}
			}
		}
		inv.idx.inside(node, count)
	}
	return rhs, n
}

// pureFunc reports whether the function with the given funcKey returns a
// result that depends only on its arguments.
func pureFunc(key string) bool { return pureFuncs[key] }
