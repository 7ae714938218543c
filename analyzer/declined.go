package analyzer

import (
	"go/ast"
	"go/types"
)

// inferDeclined finds the package's sentinel errors that mean "the
// responder declined": a package-level error variable that the functions
// and literals of the package return, after a send, only on paths where
// the send worked and its reply was read (a PubAck that says the stream
// refused to store the message: return errRetry). Such an error is the
// responder's answer, like a "busy" reply, so a loop that repeats only on
// it does not repeat an operation that may have run. A body that returns
// the sentinel after a failed send, after a send whose outcome it did not
// test, or that sends more than once, disqualifies it.
func (rt *retryCheck) inferDeclined() {
	declined := make(map[*types.Var]bool)
	bad := make(map[*types.Var]bool)
	for _, fb := range rt.vals.list {
		rets := sentinelReturns(rt.info, rt.pass.Pkg, fb.body)
		if len(rets) == 0 {
			continue
		}
		var sends []sendSite
		for _, call := range fb.calls {
			if s, ok := rt.sends.sendOf(call); ok {
				sends = append(sends, s)
			}
		}
		if len(sends) == 0 {
			continue // nothing sent before any of its returns
		}
		disqualify := func() {
			for _, v := range rets {
				bad[v] = true
			}
		}
		if len(sends) > 1 {
			disqualify()
			continue
		}
		bc := rt.bodyCFG(fb)
		l := locate(rt.info, bc.g, fb.body, sends)[0]
		if l.b == nil {
			disqualify()
			continue
		}
		c, ok := carrierOf(rt.info, l.b.Nodes[l.i], sends[0].call)
		if !ok || c.result == nil || !usedAfter(rt.info, fb.body, c.result) {
			disqualify()
			continue
		}
		d := &deps{info: rt.info, effects: make(map[ast.Node][]effect)}
		retryPaths(rt.flow, rt.graph, &search{fb: fb, g: bc.g, start: l.b, i: l.i, carriers: []carrier{c}, caseTag: bc.caseTag, typeCase: bc.typeCase, d: d,
			onReturn: func(ret *ast.ReturnStmt, lb label, _ bool) {
				v := returnedSentinel(rt.info, rt.pass.Pkg, ret)
				if v == nil {
					return
				}
				if lb == labelSuccess {
					declined[v] = true
				} else if lb != labelSafe {
					bad[v] = true
				}
			}})
	}
	for v := range declined {
		if !bad[v] {
			rt.flow.declined[v] = true
		}
	}
}

// sentinelReturns returns the package-level error variables that body
// returns as its last result (outside function literals).
func sentinelReturns(info *types.Info, pkg *types.Package, body *ast.BlockStmt) []*types.Var {
	var vs []*types.Var
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			if v := returnedSentinel(info, pkg, n); v != nil {
				vs = append(vs, v)
			}
		}
		return true
	})
	return vs
}

// returnedSentinel returns the package-level error variable of pkg that
// ret returns as its last result, or nil.
func returnedSentinel(info *types.Info, pkg *types.Package, ret *ast.ReturnStmt) *types.Var {
	if len(ret.Results) == 0 {
		return nil
	}
	id, ok := ast.Unparen(ret.Results[len(ret.Results)-1]).(*ast.Ident)
	if !ok {
		return nil
	}
	v, ok := info.Uses[id].(*types.Var)
	if !ok || v.Pkg() != pkg || v.Parent() != pkg.Scope() || !isErrorType(v.Type()) {
		return nil
	}
	return v
}

// usedAfter reports whether v is read in body (the send's reply, parsed
// or tested).
func usedAfter(info *types.Info, body *ast.BlockStmt, v *types.Var) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && info.Uses[id] == v {
			found = true
		}
		return !found
	})
	return found
}
