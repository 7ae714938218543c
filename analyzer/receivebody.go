package analyzer

import (
	"go/ast"
	"go/types"
)

// body reads a function body with the variables of start holding the
// received message (or a channel, slice or batch of them): whether it
// reads a message's body and whether it resolves claim checks, following
// what is derived from them (assignments, range, receives) and the
// functions of the package they are passed to.
func (c *recvCheck) body(body *ast.BlockStmt, start []*types.Var) *recvUse {
	tracked := make(map[*types.Var]bool, len(start))
	for _, v := range start {
		tracked[v] = true
	}
	mentions := func(e ast.Expr) bool {
		found := false
		ast.Inspect(e, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				if v, ok := c.info.Uses[id].(*types.Var); ok && tracked[v] {
					found = true
				}
			}
			return !found
		})
		return found
	}
	track := func(lhs []ast.Expr) bool {
		changed := false
		for _, l := range lhs {
			if id, ok := ast.Unparen(l).(*ast.Ident); ok {
				if v, ok := c.info.ObjectOf(id).(*types.Var); ok && !tracked[v] {
					tracked[v] = true
					changed = true
				}
			}
		}
		return changed
	}
	// Follow what is derived from the message until nothing changes.
	for changed := true; changed; {
		changed = false
		ast.Inspect(body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				for i, r := range n.Rhs {
					if !mentions(r) {
						continue
					}
					if len(n.Rhs) == len(n.Lhs) {
						changed = track(n.Lhs[i:i+1]) || changed
					} else {
						changed = track(n.Lhs) || changed
					}
				}
			case *ast.ValueSpec:
				for _, v := range n.Values {
					if mentions(v) {
						for _, id := range n.Names {
							changed = track([]ast.Expr{id}) || changed
						}
					}
				}
			case *ast.RangeStmt:
				if mentions(n.X) {
					changed = track([]ast.Expr{n.Key, n.Value}) || changed
				}
			}
			return true
		})
	}
	use := &recvUse{}
	written := make(map[ast.Expr]bool)
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				written[ast.Unparen(l)] = true
			}
		case *ast.SelectorExpr:
			if c.isClaimHeader(n.Sel) {
				use.resolves = true
			}
			if !written[n] && c.readsData(n) && mentions(n.X) {
				use.reads = true
			}
		case *ast.Ident:
			if c.isClaimHeader(n) {
				use.resolves = true
			}
		case *ast.CallExpr:
			c.call(n, mentions, use)
		case *ast.SendStmt:
			// The message goes on a channel: read where it is received.
			if mentions(n.Value) {
				if v := chanVar(c.info, n.Chan); v != nil {
					use.merge(c.chanUse(v))
				} else if use.unfollowed == "" {
					use.unfollowed = "the message goes on channel " + types.ExprString(n.Chan) + ", which the check cannot follow"
				}
			}
		}
		return true
	})
	return use
}

// call reads one call of a body: a resolve, or a function of the package
// the message is passed to (as an argument or as the receiver).
func (c *recvCheck) call(call *ast.CallExpr, mentions func(ast.Expr) bool, use *recvUse) {
	if why, ok := c.unknownCallee(call); ok && use.unfollowed == "" {
		for _, a := range call.Args {
			if _, isID := ast.Unparen(a).(*ast.Ident); isID && mentions(a) {
				use.unfollowed = why
				break
			}
		}
	}
	fn := calleeFunc(c.info, call)
	if fn == nil {
		return
	}
	if resolveFuncs[funcKey(fn)] {
		use.resolves = true
		return
	}
	d := c.decls[fn]
	if d == nil {
		return
	}
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok && d.Recv != nil && mentions(sel.X) {
		use.merge(c.callee(d, -1))
	}
	for i, a := range call.Args {
		if mentions(a) {
			use.merge(c.callee(d, i))
		}
	}
}

// callee reads the function d with its parameter i (-1: its receiver)
// holding the message.
func (c *recvCheck) callee(d *ast.FuncDecl, i int) *recvUse {
	key := recvKey{d, i}
	if u, ok := c.memo[key]; ok {
		return u
	}
	c.memo[key] = &recvUse{} // a recursive call adds nothing
	var fields []*ast.Field
	if i < 0 {
		fields = d.Recv.List
		i = 0
	} else {
		fields = d.Type.Params.List
	}
	var param *types.Var
	for _, f := range fields {
		for _, name := range f.Names {
			if i == 0 {
				param, _ = c.info.Defs[name].(*types.Var)
			}
			i--
		}
		if len(f.Names) == 0 {
			i--
		}
	}
	u := &recvUse{}
	if param != nil {
		u = c.body(d.Body, []*types.Var{param})
	}
	c.memo[key] = u
	return u
}

// readsData reports whether sel reads a message's body: the Data field of
// nats.Msg, or the Data method of jetstream.Msg or micro.Request.
func (c *recvCheck) readsData(sel *ast.SelectorExpr) bool {
	if sel.Sel.Name != msgDataField {
		return false
	}
	s := c.info.Selections[sel]
	if s == nil {
		return false
	}
	switch obj := s.Obj().(type) {
	case *types.Var:
		return isNamed(s.Recv(), natsPath, msgType)
	case *types.Func:
		return messageMethods[funcKey(obj)]
	}
	return false
}

// isClaimHeader reports whether id names claimcheck.HeaderRef or
// HeaderSize: code that looks for a claim check handles it.
func (c *recvCheck) isClaimHeader(id *ast.Ident) bool {
	obj, ok := c.info.Uses[id].(*types.Const)
	return ok && obj.Pkg() != nil && claimHeaders[obj.Pkg().Path()+"."+obj.Name()]
}
