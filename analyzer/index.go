package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"
)

// assignment is one store to a local variable in a function body.
type assignment struct {
	node  ast.Node // the *ast.AssignStmt or *ast.ValueSpec
	lhs   ast.Expr // the target: x, x.f, x[i], *x (the name, in a ValueSpec)
	rhs   ast.Expr // the value, when assigned one to one; nil otherwise
	tok   token.Token
	whole bool // the whole variable, not x.f, x[i] or *x
	inLit bool // inside a function literal of the body
}

// assignIndex is the one index of a function body's assignments that the
// checks share (argument tracking, flags, message IDs, option slices):
// the stores to each local variable (by the variable an assignment target
// is rooted in), the assignment statements outside function literals in
// source order, and the variables whose address is taken (&x.f, &x[i]
// too; whole: &x itself).
type assignIndex struct {
	byVar     map[*types.Var][]assignment
	stmts     []ast.Node
	addressed map[*types.Var]bool
	whole     map[*types.Var]bool // lazily
}

// indexOf returns the assignment index of fb, building it once.
func indexOf(info *types.Info, fb *fnBody) *assignIndex {
	if fb.idx != nil {
		return fb.idx
	}
	idx := &assignIndex{byVar: make(map[*types.Var][]assignment), addressed: make(map[*types.Var]bool)}
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
				v, whole := rootVar(info, l)
				if v == nil {
					continue
				}
				a := assignment{node: n, lhs: l, tok: n.Tok, whole: whole, inLit: inLit}
				if len(n.Rhs) == len(n.Lhs) {
					a.rhs = n.Rhs[i]
				}
				idx.byVar[v] = append(idx.byVar[v], a)
			}
		case *ast.ValueSpec:
			if !inLit {
				idx.stmts = append(idx.stmts, n)
			}
			for i, name := range n.Names {
				v := localVar(info, name)
				if v == nil {
					continue
				}
				a := assignment{node: n, lhs: name, tok: token.DEFINE, whole: true, inLit: inLit}
				if len(n.Values) == len(n.Names) {
					a.rhs = n.Values[i]
				}
				idx.byVar[v] = append(idx.byVar[v], a)
			}
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				if v, whole := rootVar(info, n.X); v != nil {
					idx.addressed[v] = true
					if whole {
						if idx.whole == nil {
							idx.whole = make(map[*types.Var]bool)
						}
						idx.whole[v] = true
					}
				}
			}
		}
		return true
	}
	ast.Inspect(fb.body, func(n ast.Node) bool { return visit(n, false) })
	fb.idx = idx
	return idx
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
