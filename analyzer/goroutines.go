package analyzer

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
)

// goSend is a send made in a goroutine that a go statement of the body
// starts (go func() { resp, err := t.Call(req); ch <- result{resp, err}
// }()), whose outcome the goroutine sends on a channel of the body: the
// retry check follows the outcome to where the body receives it from
// that channel.
type goSend struct {
	site sendSite
	stmt *ast.GoStmt
	lit  *ast.FuncLit
	ch   *types.Var // the channel, a local variable of the body
	// field is the struct field the error travels in; nil when the
	// channel carries the error itself (chan error).
	field *types.Var
}

// goSends returns the sends of the goroutines started in fb (outside its
// function literals) whose outcome comes back on a channel of fb.
func (rt *retryCheck) goSends(fb *fnBody) []goSend {
	var out []goSend
	ast.Inspect(fb.body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.GoStmt:
			if lit, ok := ast.Unparen(n.Call.Fun).(*ast.FuncLit); ok {
				if gs, ok := rt.goSendOf(n, lit); ok {
					out = append(out, gs)
				}
			}
			return false
		}
		return true
	})
	return out
}

// goSendOf finds the first send of the goroutine literal lit whose outcome
// it sends on a channel declared outside lit: the call itself (ch <-
// t.Send(m)), its error variable (errc <- err) or a struct with that
// variable in a field (ch <- result{resp, err}).
func (rt *retryCheck) goSendOf(stmt *ast.GoStmt, lit *ast.FuncLit) (goSend, bool) {
	fb := rt.vals.bodies[lit.Body]
	if fb == nil {
		return goSend{}, false
	}
	info := rt.info
	for _, call := range fb.calls {
		s, ok := rt.sends.sendOf(call)
		if !ok {
			continue
		}
		errVar := rt.goErrVar(lit, call)
		var gs goSend
		found := false
		ast.Inspect(lit.Body, func(n ast.Node) bool {
			if found {
				return false
			}
			switch n := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.SendStmt:
				ch := localVar(info, n.Chan)
				if ch == nil || ch.Pos() >= lit.Pos() && ch.Pos() < lit.End() {
					return true
				}
				if field, ok := outcomeIn(info, n.Value, call, errVar); ok {
					gs, found = goSend{site: s, stmt: stmt, lit: lit, ch: ch, field: field}, true
				}
			}
			return true
		})
		if found {
			return gs, true
		}
	}
	return goSend{}, false
}

// goErrVar returns the error variable that the statement of lit making
// call assigns (resp, err := t.Call(req)), if it is assigned only there.
func (rt *retryCheck) goErrVar(lit *ast.FuncLit, call *ast.CallExpr) *types.Var {
	var v *types.Var
	ast.Inspect(lit.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.AssignStmt, *ast.DeclStmt:
			if c, ok := carrierOf(rt.info, n, call); ok && c.call == nil && c.v != nil {
				v = c.v
			}
		}
		return v == nil
	})
	if v == nil || rt.vals.assigned[v] > 1 {
		return nil
	}
	return v
}

// outcomeIn reports whether the value sent, e, is the outcome of call: the
// call itself or its error variable (field nil), or a struct literal with
// the error variable in a field (that field).
func outcomeIn(info *types.Info, e ast.Expr, call *ast.CallExpr, errVar *types.Var) (*types.Var, bool) {
	isErr := func(x ast.Expr) bool {
		x = ast.Unparen(x)
		if x == call {
			return true
		}
		id, ok := x.(*ast.Ident)
		return ok && errVar != nil && info.Uses[id] == errVar
	}
	if isErr(e) {
		return nil, isErrorType(info.TypeOf(e))
	}
	lit, ok := ast.Unparen(e).(*ast.CompositeLit)
	if !ok {
		return nil, false
	}
	var field *types.Var
	litFields(info, lit, func(f *types.Var, val ast.Expr) {
		if field == nil && isErr(val) && isErrorType(f.Type()) {
			field = f
		}
	})
	return field, field != nil
}

// chanReceives returns the carriers of the receives from gs's channel in
// fb (r := <-ch, err = <-errc, case r := <-ch:), each with its node.
func chanReceives(info *types.Info, fb *fnBody, gs goSend) ([]carrier, []ast.Node) {
	var cs []carrier
	var nodes []ast.Node
	key := funcKey(calleeFunc(info, gs.site.call))
	ast.Inspect(fb.body, func(n ast.Node) bool {
		var lhs, rhs ast.Expr
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.AssignStmt:
			if len(n.Rhs) == 1 && len(n.Lhs) >= 1 {
				lhs, rhs = n.Lhs[0], n.Rhs[0]
			}
		case *ast.DeclStmt:
			if g, ok := n.Decl.(*ast.GenDecl); ok && len(g.Specs) == 1 {
				if vs, ok := g.Specs[0].(*ast.ValueSpec); ok && len(vs.Values) == 1 {
					lhs, rhs = vs.Names[0], vs.Values[0]
				}
			}
		}
		u, ok := ast.Unparen(rhs).(*ast.UnaryExpr)
		if !ok || u.Op != token.ARROW || localVar(info, u.X) != gs.ch || len(cs) >= 200 {
			return true
		}
		if v := localVar(info, lhs); v != nil {
			cs = append(cs, carrier{v: v, field: gs.field, send: key, recvd: true})
			nodes = append(nodes, n)
		}
		return true
	})
	return cs, nodes
}

// goDeps returns the variables of fb that what the goroutine sends
// depends on: the arguments of the go statement's call (go func(r
// *Request) { ... }(req)) and every variable of fb the literal mentions
// (what it captures) but the channel.
func goDeps(info *types.Info, fb *fnBody, gs goSend) *deps {
	parts := append([]ast.Expr(nil), gs.stmt.Call.Args...)
	seen := make(map[*types.Var]bool)
	ast.Inspect(gs.lit.Body, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			if v := localVar(info, id); v != nil && v != gs.ch && !seen[v] && (v.Pos() < gs.lit.Pos() || v.Pos() >= gs.lit.End()) {
				seen[v] = true
				parts = append(parts, id)
			}
		}
		return true
	})
	d := depsFrom(info, fb, parts, nil)
	// A body computed afresh in the call (a new ID per attempt) is
	// never the same, as for any send.
	body, _ := bodyParts(info, gs.site)
	for _, p := range body {
		d.nondet = d.nondet || nondet(info, p)
	}
	return d
}

// checkGoSends reports the goroutine sends of a looping body fb retried on
// a failure received from their channel: the path from the go statement
// through the receive back to the go statement.
func (rt *retryCheck) checkGoSends(fb *fnBody, bc *bodyCFG) {
	for _, gs := range rt.goSends(fb) {
		locs := locate(rt.info, bc.g, fb.body, []sendSite{{call: gs.stmt.Call}})
		l := locs[0]
		if l.b == nil {
			continue
		}
		recvs, nodes := chanReceives(rt.info, fb, gs)
		if len(recvs) == 0 {
			continue
		}
		carriers := append(append([]carrier{{}}, bc.recvs...), recvs...)
		recv := make(map[ast.Node]int, len(bc.recvNodes)+len(nodes))
		for n, i := range bc.recvNodes {
			recv[n] = i
		}
		for i, n := range nodes {
			recv[n] = 1 + len(bc.recvs) + i
		}
		r := retryPaths(rt.flow, rt.graph, &search{
			fb: fb, g: bc.g, start: l.b, i: l.i,
			carriers: carriers, recv: recv,
			self: fb.self, caseTag: bc.caseTag, typeCase: bc.typeCase, flags: bc.flags, d: goDeps(rt.info, fb, gs),
		})
		if !retried(r) || rt.ids.fixedID(gs.site, fb, r.region(l.b, true), gs.lit) {
			continue
		}
		s := gs.site
		rt.rep.addRetry(s.call, s.info.via, fmt.Sprintf("call of %s in a goroutine is retried on a failure from %s: %s", s.name, gs.ch.Name(), retryAdvice(s.info.kind)))
	}
}
