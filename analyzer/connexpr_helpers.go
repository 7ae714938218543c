package analyzer

import (
	"go/ast"
	"go/types"
)

// Small helpers of the connection-options summary (connexpr.go): what an
// expression mentions, a function body's top-level statements, a call's
// signature.

// isAppendTo reports whether call is append(v, ...).
func isAppendTo(info *types.Info, call *ast.CallExpr, v *types.Var) bool {
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	if !ok || id.Name != "append" || len(call.Args) == 0 {
		return false
	}
	if tv, ok := info.Types[call.Fun]; !ok || !tv.IsBuiltin() {
		return false
	}
	return localVar(info, call.Args[0]) == v
}

// mentions reports whether e mentions the variable v.
func mentions(info *types.Info, e ast.Expr, v *types.Var) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && info.Uses[id] == v {
			found = true
		}
		return !found
	})
	return found
}

// topLevel returns the assignments and declarations that are statements
// of body itself, run on every path that reaches the body's end.
func topLevel(body *ast.BlockStmt) map[ast.Node]bool {
	top := make(map[ast.Node]bool, len(body.List))
	for _, st := range body.List {
		top[st] = true
		if d, ok := st.(*ast.DeclStmt); ok {
			if g, ok := d.Decl.(*ast.GenDecl); ok {
				for _, sp := range g.Specs {
					top[sp] = true
				}
			}
		}
	}
	return top
}

// sigOf returns the signature of the function e denotes, or nil.
func sigOf(info *types.Info, e ast.Expr) *types.Signature {
	t := info.TypeOf(e)
	if t == nil {
		return nil
	}
	sig, _ := t.Underlying().(*types.Signature)
	return sig
}
