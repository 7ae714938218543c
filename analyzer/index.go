package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"
	"sort"
)

// assignment is one store in a package: a target of an assignment
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
	fb    *fnBody       // the innermost body it is in; nil at package level
	whole bool          // the whole variable, not x.f, x[i] or *x
	inLit bool          // in a body's index: inside a function literal of the body
}

// storeList is the one list of a package's stores, in the scan's order
// (source order, file by file). The scan records it, once (state.store:
// record); the value index and the option fields read each store as it
// is recorded, and a body's assignIndex is the run of it within the body.
type storeList struct {
	all     []assignment
	args    map[*ast.UnaryExpr]*ast.CallExpr // &x arguments of the calls seen, until the scan reaches them
	scanned bool                             // the scan is over: the list is complete
}

// addressArgs notes the &x arguments of call, which the scan reaches next.
func (sl *storeList) addressArgs(call *ast.CallExpr) {
	for _, arg := range call.Args {
		if u, ok := ast.Unparen(arg).(*ast.UnaryExpr); ok && u.Op == token.AND {
			if sl.args == nil {
				sl.args = make(map[*ast.UnaryExpr]*ast.CallExpr)
			}
			sl.args[u] = call
		}
	}
}

// record appends the stores of the node n of the scan, in the body fb, and
// returns them.
func (sl *storeList) record(info *types.Info, n ast.Node, fb *fnBody) []assignment {
	from := len(sl.all)
	add := func(a assignment) {
		a.v, a.whole = rootVar(info, a.lhs)
		a.fb = fb
		sl.all = append(sl.all, a)
	}
	switch n := n.(type) {
	case *ast.AssignStmt:
		for i, l := range n.Lhs {
			a := assignment{node: n, lhs: l, tok: n.Tok}
			a.rhs, a.tuple = valueOf(n.Rhs, i, len(n.Lhs))
			add(a)
		}
	case *ast.ValueSpec:
		for i, name := range n.Names {
			a := assignment{node: n, lhs: name, tok: token.DEFINE}
			a.rhs, a.tuple = valueOf(n.Values, i, len(n.Names))
			add(a)
		}
	case *ast.IncDecStmt:
		add(assignment{node: n, lhs: n.X, tok: n.Tok})
	case *ast.UnaryExpr:
		if n.Op == token.AND {
			add(assignment{node: n, lhs: n.X, tok: token.AND, call: sl.args[n]})
			delete(sl.args, n)
		}
	}
	return sl.all[from:]
}

// valueOf returns what the i-th of n targets is assigned from values:
// the i-th value when there is one per target, or the one call (or
// other multi-value expression) all targets share.
func valueOf(values []ast.Expr, i, n int) (rhs, tuple ast.Expr) {
	switch {
	case len(values) == n:
		return values[i], nil
	case len(values) == 1:
		return nil, values[0]
	}
	return nil, nil
}

// recordBody records the stores of the body fb where the scan does not
// run (a package without NATS: scanHelperCandidates): the function
// literals in it are no bodies, their stores in none.
func (sl *storeList) recordBody(info *types.Info, fb *fnBody) {
	var visit func(n ast.Node, in *fnBody) bool
	visit = func(n ast.Node, in *fnBody) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			ast.Inspect(n.Body, func(m ast.Node) bool { return visit(m, nil) })
			return false
		case *ast.CallExpr:
			sl.addressArgs(n)
		}
		sl.record(info, n, in)
		return true
	}
	ast.Inspect(fb.body, func(n ast.Node) bool { return visit(n, fb) })
}

// assignIndex is the one index of a function body's stores that the
// checks share, the run of the package's store list within the body:
// argument tracking and the stores between two sends (deps.go), flags
// (loopflags.go), option slices and values (connexpr.go, optstate.go),
// message IDs and the variables that stay the same across a retry
// (msgid.go, invariance.go), and the values read from a send's result
// (carrier.go: withDerived). It holds every store in source order
// (function literals included, each marked), the assignments and
// declarations of each local variable (by the variable an assignment
// target is rooted in), the assignment statements and value specs outside
// function literals in source order, and the variables whose address is
// taken (&x.f, &x[i] too). The same stores, package-wide, are the value
// index's (values.go) and the option fields' (optfields.go).
type assignIndex struct {
	all       []assignment
	byVar     map[*types.Var][]assignment // assignments and declarations only: no ++, -- or &
	stmts     []ast.Node
	addressed map[*types.Var]bool
}

// indexOf returns the assignment index of fb, building it once, after the
// scan, from the stores recorded from fb.from on.
func indexOf(fb *fnBody) *assignIndex {
	if fb.idx != nil {
		return fb.idx
	}
	if !fb.stores.scanned {
		panic("analyzer: a body's assignment index read during the scan")
	}
	idx := &assignIndex{byVar: make(map[*types.Var][]assignment), addressed: make(map[*types.Var]bool)}
	pos, end := fb.body.Pos(), fb.body.End()
	var last ast.Node
	for _, a := range fb.stores.all[fb.from:] {
		if p := a.node.Pos(); p < pos || p >= end {
			break // past the body: a later node of its file, or another file
		}
		a.inLit = a.fb != fb
		idx.all = append(idx.all, a)
		switch a.node.(type) {
		case *ast.AssignStmt, *ast.ValueSpec:
			if !a.inLit && a.node != last {
				idx.stmts = append(idx.stmts, a.node)
			}
			last = a.node
			if a.v != nil {
				idx.byVar[a.v] = append(idx.byVar[a.v], a)
			}
		case *ast.UnaryExpr:
			if a.v != nil {
				idx.addressed[a.v] = true
			}
		}
	}
	fb.idx = idx
	return idx
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
		if idx.all[i].node.End() <= end { // not case x = <-ch: around its own x
			f(&idx.all[i])
		}
	}
}

// flagsOf returns the flags of a function body, by bit: bool local
// variables assigned a constant somewhere in the body, whose address is
// not taken and that no function literal assigns (see loopflags.go).
func flagsOf(info *types.Info, fb *fnBody) map[*types.Var]int {
	idx := indexOf(fb)
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
