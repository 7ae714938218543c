package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"
)

// invariance decides whether an expression has the same value on every
// run of a region of code.
type invariance struct {
	info   *types.Info
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

// assignments counts the assignments to v in the region, returning the
// right-hand side when there is exactly one simple one.
func (inv *invariance) assignments(v *types.Var) (ast.Expr, int) {
	info := inv.info
	var rhs ast.Expr
	n := 0
	for _, node := range inv.region {
		ast.Inspect(node, func(x ast.Node) bool {
			switch x := x.(type) {
			case *ast.AssignStmt:
				for i, l := range x.Lhs {
					if id, ok := ast.Unparen(l).(*ast.Ident); ok && info.ObjectOf(id) == v {
						n++
						rhs = nil
						if len(x.Rhs) == len(x.Lhs) && (x.Tok == token.DEFINE || x.Tok == token.ASSIGN) {
							rhs = x.Rhs[i]
						}
					}
				}
			case *ast.IncDecStmt:
				if id, ok := ast.Unparen(x.X).(*ast.Ident); ok && info.Uses[id] == v {
					n++
				}
			case *ast.UnaryExpr:
				if id, ok := ast.Unparen(x.X).(*ast.Ident); ok && x.Op == token.AND && info.Uses[id] == v {
					n += 2 // its address escapes: never fixed
				}
			case *ast.ValueSpec:
				for i, name := range x.Names {
					if info.Defs[name] == v {
						n++
						rhs = nil
						if len(x.Values) == len(x.Names) {
							rhs = x.Values[i]
						}
					}
				}
			}
			return true
		})
	}
	return rhs, n
}

// pureFunc reports whether the function with the given funcKey returns a
// result that depends only on its arguments.
func pureFunc(key string) bool { return pureFuncs[key] }
