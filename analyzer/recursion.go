package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"
)

// callGraph is the graph of calls between the functions of the package,
// outside function literals: who calls whom (edges, with the callers in
// source order for a stable fixpoint), and the answers to reaches so far.
// The scan adds the edges; the send index propagates sends along them,
// and the retry check asks whether a function may run again from its
// body (mayRecurse, recursiveCall).
type callGraph struct {
	info    *types.Info
	pkg     *types.Package
	callers []*types.Func // functions with calls to local functions, in source order
	edges   map[*types.Func][]*types.Func
	reach   map[[2]*types.Func]bool // memo of reaches
	cyc     *cycles                 // lazily, once the scan is done
	// bodyOf returns the body of a function of the package, or nil.
	bodyOf func(*types.Func) *ast.BlockStmt
}

// newCallGraph returns the empty call graph of pkg.
func newCallGraph(info *types.Info, pkg *types.Package) *callGraph {
	return &callGraph{info: info, pkg: pkg, edges: make(map[*types.Func][]*types.Func), reach: make(map[[2]*types.Func]bool)}
}

// add records a call of callee in caller's body.
func (cg *callGraph) add(caller, callee *types.Func) {
	if _, seen := cg.edges[caller]; !seen {
		cg.callers = append(cg.callers, caller)
	}
	cg.edges[caller] = append(cg.edges[caller], callee)
}

// recursiveCall returns the call in node, outside function literals, by
// which self runs again: a call of self (direct), of a function of this
// package that calls self back (mutual recursion), or time.AfterFunc with
// a function that calls self (rescheduling itself).
func (cg *callGraph) recursiveCall(node ast.Node, self *types.Func) (call *ast.CallExpr, direct bool) {
	if self == nil {
		return nil, false
	}
	ast.Inspect(node, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			if call != nil {
				return false
			}
			fn := calleeFunc(cg.info, n)
			switch {
			case fn == self:
				call, direct = n, true
			case fn != nil && fn.Pkg() == cg.pkg && cg.callsBackTo(fn, self):
				call = n
			case reschedulers[funcKey(fn)] && len(n.Args) > 0 && cg.callsBack(n.Args[len(n.Args)-1], self):
				call = n
			}
		}
		return call == nil
	})
	return call, direct
}

// callsBack reports whether the function value e runs self: self itself
// (s.send), or a literal that calls self or a function reaching it.
func (cg *callGraph) callsBack(e ast.Expr, self *types.Func) bool {
	e = ast.Unparen(e)
	if fn, ok := objectOf(cg.info, e).(*types.Func); ok {
		return fn == self || cg.reaches(fn, self)
	}
	lit, ok := e.(*ast.FuncLit)
	if !ok {
		return false
	}
	found := false
	ast.Inspect(lit.Body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if fn := calleeFunc(cg.info, c); fn == self || (fn != nil && fn.Pkg() == cg.pkg && cg.reaches(fn, self)) {
				found = true
			}
		}
		return !found
	})
	return found
}

// reaches reports whether fn calls target, directly or through other
// functions of this package (calls outside function literals).
func (cg *callGraph) reaches(fn, target *types.Func) bool {
	key := [2]*types.Func{fn, target}
	if r, ok := cg.reach[key]; ok {
		return r
	}
	cg.reach[key] = false // cycles
	seen := map[*types.Func]bool{fn: true}
	work := []*types.Func{fn}
	found := false
	for len(work) > 0 && !found {
		f := work[len(work)-1]
		work = work[:len(work)-1]
		for _, callee := range cg.edges[f] {
			if callee == target {
				found = true
				break
			}
			if !seen[callee] {
				seen[callee] = true
				work = append(work, callee)
			}
		}
	}
	cg.reach[key] = found
	return found
}

// sameRecursion reports whether the recursive call rc passes every
// parameter the send's body depends on unchanged (f(n-1, msg) inside
// f(n int, msg *nats.Msg) sends msg again), directly or through one
// function of the package that passes it on (send(m) calling
// recover(m, err) calling send(m) again). Through a timer, only a body
// that depends on no parameter is known to be the same.
func (cg *callGraph) sameRecursion(rc *ast.CallExpr, direct bool, self *types.Func, d *deps) bool {
	sig, _ := self.Type().(*types.Signature)
	if sig == nil {
		return false
	}
	for k := 0; k < sig.Params().Len(); k++ {
		p := sig.Params().At(k)
		if d.bit(p) == 0 {
			continue
		}
		j := argOf(cg.info, rc, p)
		switch {
		case j < 0:
			return false
		case direct:
			if j != k {
				return false
			}
		case !cg.passesOn(rc, j, self, k):
			return false
		}
	}
	return true
}

// argOf returns the index of the argument of call that is the variable
// v, or -1.
func argOf(info *types.Info, call *ast.CallExpr, v *types.Var) int {
	for j, a := range call.Args {
		if id, ok := ast.Unparen(a).(*ast.Ident); ok && info.Uses[id] == v {
			return j
		}
	}
	return -1
}

// passesOn reports whether the function rc calls passes its parameter j,
// not assigned in its body, as argument k of every call of self in its
// body (outside function literals), and has one.
func (cg *callGraph) passesOn(rc *ast.CallExpr, j int, self *types.Func, k int) bool {
	fn := calleeFunc(cg.info, rc)
	if fn == nil || fn.Pkg() != cg.pkg || cg.bodyOf == nil || rc.Ellipsis.IsValid() {
		return false
	}
	sig, _ := fn.Type().(*types.Signature)
	body := cg.bodyOf(fn)
	if sig == nil || body == nil || j >= sig.Params().Len() || sig.Variadic() && j == sig.Params().Len()-1 {
		return false
	}
	q := sig.Params().At(j)
	calls, ok := 0, true
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if id, isID := ast.Unparen(l).(*ast.Ident); isID && cg.info.ObjectOf(id) == q {
					ok = false
				}
			}
		case *ast.UnaryExpr:
			if id, isID := ast.Unparen(n.X).(*ast.Ident); isID && n.Op == token.AND && cg.info.Uses[id] == q {
				ok = false
			}
		case *ast.CallExpr:
			if calleeFunc(cg.info, n) == self {
				calls++
				if argOf(cg.info, n, q) != k {
					ok = false
				}
			}
		}
		return ok
	})
	return ok && calls > 0
}

// mayRecurse reports whether fb's function may run again from its body:
// it calls itself, a function of this package that calls it back, or
// reschedules itself with time.AfterFunc.
func (cg *callGraph) mayRecurse(fb *fnBody) bool {
	if fb.self == nil {
		return false
	}
	if fb.reschedules {
		return true
	}
	for _, call := range fb.calls {
		if fn := calleeFunc(cg.info, call); fn == fb.self || (fn != nil && fn.Pkg() == cg.pkg && cg.callsBackTo(fn, fb.self)) {
			return true
		}
	}
	return false
}
