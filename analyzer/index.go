package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"
	"sort"
)

// assignment is one store in a function body: a target of an assignment
// statement or of a variable declaration, the operand of x++ or x--, or
// a variable whose address is taken (&x, through which it may change
// anywhere).
type assignment struct {
	node  ast.Node // the *ast.AssignStmt, *ast.ValueSpec, *ast.IncDecStmt or *ast.UnaryExpr (&x)
	lhs   ast.Expr // the target: x, x.f, x[i], *x (the name, in a ValueSpec; the operand, for ++, -- and &)
	rhs   ast.Expr // the value, when assigned one to one; nil otherwise
	tuple ast.Expr // the one right side of a multi-value assignment (a, b := f()); nil otherwise
	tok   token.Token
	v     *types.Var    // the local variable the target is rooted in, or nil
	call  *ast.CallExpr // for &x: the call it is an argument of (f(&x)), if any
	whole bool          // the whole variable, not x.f, x[i] or *x
	inLit bool          // inside a function literal of the body
}

// assignIndex is the one index of a function body's stores that the
// checks share: argument tracking and the stores between two sends (deps:
// effectsOf), flags, option slices and values (connexpr.go, optstate.go),
// message IDs and the variables that stay the same across a retry
// (msgid.go, invariance.go), and the values read from a send's result
// (carrier.go: withDerived). It holds every store in source order
// (function literals included, each marked), the assignments and
// declarations of each local variable (by the variable an assignment
// target is rooted in), the assignment statements and value specs outside
// function literals in source order, and the variables whose address is
// taken (&x.f, &x[i] too). The package-level stores that follow values
// across functions are the value index's (values.go).
type assignIndex struct {
	all       []assignment
	byVar     map[*types.Var][]assignment // assignments and declarations only: no ++, -- or &
	stmts     []ast.Node
	addressed map[*types.Var]bool
}

// indexOf returns the assignment index of fb, building it once.
func indexOf(info *types.Info, fb *fnBody) *assignIndex {
	if fb.idx != nil {
		return fb.idx
	}
	idx := &assignIndex{byVar: make(map[*types.Var][]assignment), addressed: make(map[*types.Var]bool)}
	args := make(map[*ast.UnaryExpr]*ast.CallExpr) // &x arguments, by the call they are passed to
	var visit func(n ast.Node, inLit bool) bool
	visit = func(n ast.Node, inLit bool) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			ast.Inspect(n.Body, func(m ast.Node) bool { return visit(m, true) })
			return false
		case *ast.AssignStmt:
			if !inLit {
				idx.stmts = append(idx.stmts, n)
			}
			for i, l := range n.Lhs {
				a := assignment{node: n, lhs: l, tok: n.Tok, inLit: inLit}
				switch {
				case len(n.Rhs) == len(n.Lhs):
					a.rhs = n.Rhs[i]
				case len(n.Rhs) == 1:
					a.tuple = n.Rhs[0]
				}
				idx.add(info, a)
			}
		case *ast.ValueSpec:
			if !inLit {
				idx.stmts = append(idx.stmts, n)
			}
			for i, name := range n.Names {
				a := assignment{node: n, lhs: name, tok: token.DEFINE, inLit: inLit}
				switch {
				case len(n.Values) == len(n.Names):
					a.rhs = n.Values[i]
				case len(n.Values) == 1:
					a.tuple = n.Values[0]
				}
				idx.add(info, a)
			}
		case *ast.IncDecStmt:
			idx.add(info, assignment{node: n, lhs: n.X, tok: n.Tok, inLit: inLit})
		case *ast.CallExpr:
			for _, arg := range n.Args {
				if u, ok := ast.Unparen(arg).(*ast.UnaryExpr); ok && u.Op == token.AND {
					args[u] = n
				}
			}
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				idx.add(info, assignment{node: n, lhs: n.X, tok: token.AND, call: args[n], inLit: inLit})
			}
		}
		return true
	}
	ast.Inspect(fb.body, func(n ast.Node) bool { return visit(n, false) })
	fb.idx = idx
	return idx
}

// add indexes the store a, whose target is rooted in a local variable or
// not.
func (idx *assignIndex) add(info *types.Info, a assignment) {
	a.v, a.whole = rootVar(info, a.lhs)
	idx.all = append(idx.all, a)
	if a.v == nil {
		return
	}
	switch a.node.(type) {
	case *ast.AssignStmt, *ast.ValueSpec:
		idx.byVar[a.v] = append(idx.byVar[a.v], a)
	case *ast.UnaryExpr:
		idx.addressed[a.v] = true
	}
}

// inside calls f with each store within the node n of the body (function
// literals included), in source order. A range loop's key and value, as
// pathResult.region gives them (an assignment without right side), have
// the stores within those expressions.
func (idx *assignIndex) inside(n ast.Node, f func(*assignment)) {
	if idx == nil {
		return
	}
	if as, ok := n.(*ast.AssignStmt); ok && len(as.Rhs) == 0 {
		for _, l := range as.Lhs {
			idx.inside(l, f)
		}
		return
	}
	pos, end := n.Pos(), n.End()
	i := sort.Search(len(idx.all), func(i int) bool { return idx.all[i].node.Pos() >= pos })
	for ; i < len(idx.all) && idx.all[i].node.Pos() < end; i++ {
		if idx.all[i].node.End() <= end { // not x := <-ch around its own x
			f(&idx.all[i])
		}
	}
}

// flagsOf returns the flags of a function body, by bit: bool local
// variables assigned a constant somewhere in the body, whose address is
// not taken and that no function literal assigns (see loopflags.go).
func flagsOf(info *types.Info, fb *fnBody) map[*types.Var]int {
	idx := indexOf(info, fb)
	flags := make(map[*types.Var]int)
	for _, node := range idx.stmts { // source order, for stable bits
		as, ok := node.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != len(as.Rhs) {
			continue
		}
		for i, l := range as.Lhs {
			v := localVar(info, l)
			if v == nil || !isBool(v.Type()) || idx.addressed[v] {
				continue
			}
			if _, seen := flags[v]; seen || len(flags) >= maxFlags {
				continue
			}
			if _, ok := boolConst(info, as.Rhs[i]); ok && flagSafe(idx.byVar[v]) {
				flags[v] = len(flags)
			}
		}
	}
	return flags
}

// flagSafe reports whether every store to a flag is one followed by
// setFlags: whole, one to one, outside function literals.
func flagSafe(as []assignment) bool {
	for _, a := range as {
		if a.inLit || !a.whole || (a.rhs == nil && a.tok != token.DEFINE) {
			return false
		}
	}
	return true
}
