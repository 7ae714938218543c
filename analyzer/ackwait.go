package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/cfg"
)

// Waiting for an acknowledgement. A loop that sends, then waits in a
// select for a message its own subscription delivers (the peer's ack)
// and sends the same body again when a timer fires first, resends after
// a timeout: the first may have arrived and its ack been lost. The timer's
// case is a failure of the send, as a NextMsg that timed out is.

// ackIndex knows the channels of the package that a NATS subscription
// feeds: one given to ChanSubscribe (or a twin), one sent to or closed in
// a subscription's callback (a literal or a function of the package), and
// one sent to or closed by a goroutine or a function reading messages
// (NextMsg, Fetch, Next) or receiving from such a channel.
type ackIndex struct {
	fed map[*types.Var]bool
}

// ackBody is what one function body does with channels.
type ackBody struct {
	nats   bool             // it is handed NATS messages
	goes   bool             // it runs as a goroutine (go f(), go func(){}())
	sends  []*types.Var     // channels it sends to or closes
	recvs  []*types.Var     // channels it receives from or ranges over
	nested []*ast.BlockStmt // function literals in it
}

// newAckIndex reads the files of the package once.
func newAckIndex(info *types.Info, files []*ast.File) *ackIndex {
	bodies := make(map[*ast.BlockStmt]*ackBody)
	fed := make(map[*types.Var]bool)
	decls := make(map[*types.Func]*ast.BlockStmt)
	var order []*ast.BlockStmt
	var walk func(n ast.Node, cur *ast.BlockStmt)
	body := func(b *ast.BlockStmt) *ackBody {
		ab := bodies[b]
		if ab == nil {
			ab = &ackBody{}
			bodies[b] = ab
			order = append(order, b)
		}
		return ab
	}
	handler := func(e ast.Expr) *ast.BlockStmt {
		switch x := ast.Unparen(e).(type) {
		case *ast.FuncLit:
			return x.Body
		case *ast.Ident, *ast.SelectorExpr:
			if fn, ok := objectOf(info, x).(*types.Func); ok {
				if b := decls[fn]; b != nil {
					return b
				}
			}
		}
		return nil
	}
	var goCalls []ast.Expr
	var handlers []ast.Expr
	walk = func(n ast.Node, cur *ast.BlockStmt) {
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Body == nil {
					return false
				}
				body(n.Body)
				walk(n.Body, n.Body)
				return false
			case *ast.FuncLit:
				body(n.Body)
				if cur != nil {
					body(cur).nested = append(body(cur).nested, n.Body)
				}
				walk(n.Body, n.Body)
				return false
			case *ast.GoStmt:
				goCalls = append(goCalls, n.Call.Fun)
			case *ast.SendStmt:
				if v := chanVar(info, n.Chan); v != nil && cur != nil {
					body(cur).sends = append(body(cur).sends, v)
				}
			case *ast.UnaryExpr:
				if v := chanVar(info, n.X); n.Op == token.ARROW && v != nil && cur != nil {
					body(cur).recvs = append(body(cur).recvs, v)
				}
			case *ast.RangeStmt:
				if v := chanVar(info, n.X); v != nil && cur != nil {
					if _, ok := info.TypeOf(n.X).Underlying().(*types.Chan); ok {
						body(cur).recvs = append(body(cur).recvs, v)
					}
				}
			case *ast.CallExpr:
				if id, ok := ast.Unparen(n.Fun).(*ast.Ident); ok && id.Name == "close" && len(n.Args) == 1 && cur != nil {
					if _, ok := info.Uses[id].(*types.Builtin); ok {
						if v := chanVar(info, n.Args[0]); v != nil {
							body(cur).sends = append(body(cur).sends, v)
						}
					}
					return true
				}
				api, ok := receiveAPIs[funcKey(calleeFunc(info, n))]
				if !ok {
					return true
				}
				if api.chanArg >= 0 && api.chanArg < len(n.Args) {
					if v := chanVar(info, n.Args[api.chanArg]); v != nil {
						fed[v] = true
					}
				}
				if api.arg >= 0 && api.arg < len(n.Args) {
					handlers = append(handlers, n.Args[api.arg])
				} else if api.chanArg < 0 && cur != nil {
					body(cur).nats = true // NextMsg, Fetch, Next
				}
			}
			return true
		})
	}
	// Declarations first, so that handlers and go statements naming a
	// function of the package find its body.
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				if fn, ok := info.Defs[fd.Name].(*types.Func); ok {
					decls[fn] = fd.Body
				}
			}
		}
	}
	for _, f := range files {
		walk(f, nil)
	}
	for _, h := range handlers {
		if b := handler(h); b != nil {
			body(b).nats = true
		}
	}
	for _, g := range goCalls {
		if b := handler(g); b != nil {
			body(b).goes = true
		}
	}
	ai := &ackIndex{fed: fed}
	// A fed channel feeds the channels its goroutine readers send to.
	for changed := true; changed; {
		changed = false
		for _, b := range order {
			ab := bodies[b]
			if !ab.nats && ab.goes {
				for _, v := range ab.recvs {
					if ai.fed[v] {
						ab.nats = true
						break
					}
				}
			}
			if !ab.nats {
				continue
			}
			for _, v := range ab.allSends(bodies) {
				if !ai.fed[v] {
					ai.fed[v] = true
					changed = true
				}
			}
		}
	}
	return ai
}

// allSends returns the channels ab and the function literals in it send
// to or close.
func (ab *ackBody) allSends(bodies map[*ast.BlockStmt]*ackBody) []*types.Var {
	out := append([]*types.Var(nil), ab.sends...)
	for _, n := range ab.nested {
		if nb := bodies[n]; nb != nil {
			out = append(out, nb.allSends(bodies)...)
		}
	}
	return out
}

// chanVar returns the variable or field holding the channel e (s.acks,
// acks, s.pending[seq]: the field pending), or nil.
func chanVar(info *types.Info, e ast.Expr) *types.Var {
	e = ast.Unparen(e)
	if ix, ok := e.(*ast.IndexExpr); ok {
		e = ast.Unparen(ix.X)
	}
	var v *types.Var
	switch x := e.(type) {
	case *ast.Ident:
		v, _ = info.Uses[x].(*types.Var)
	case *ast.SelectorExpr:
		v, _ = info.Uses[x.Sel].(*types.Var)
	}
	return v
}

// ackTimeouts returns the case bodies of g's selects that are a timer
// firing while the select waits for a channel a subscription feeds: case
// <-time.After(d) or <-timer.C beside case a := <-s.acks. A ticker's case
// is a period, not a timeout, and is not one.
func (ai *ackIndex) ackTimeouts(info *types.Info, g *cfg.CFG, body *ast.BlockStmt) map[*cfg.Block]*ast.CommClause {
	waits := make(map[*ast.CommClause]bool)
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.SelectStmt:
			var timers []*ast.CommClause
			acked := false
			for _, s := range n.Body.List {
				cc := s.(*ast.CommClause)
				ch := commChan(cc.Comm)
				if ch == nil {
					continue
				}
				if isTimerChan(info, ch) {
					timers = append(timers, cc)
				} else if v := chanVar(info, ch); v != nil && ai.fed[v] {
					acked = true
				}
			}
			if acked {
				for _, cc := range timers {
					waits[cc] = true
				}
			}
		}
		return true
	})
	if len(waits) == 0 {
		return nil
	}
	out := make(map[*cfg.Block]*ast.CommClause)
	for _, b := range g.Blocks {
		if cc, ok := b.Stmt.(*ast.CommClause); ok && b.Kind == cfg.KindSelectCaseBody && waits[cc] {
			out[b] = cc
		}
	}
	return out
}

// commChan returns the channel a select case receives from, or nil.
func commChan(s ast.Stmt) ast.Expr {
	var e ast.Expr
	switch s := s.(type) {
	case *ast.ExprStmt:
		e = s.X
	case *ast.AssignStmt:
		if len(s.Rhs) == 1 {
			e = s.Rhs[0]
		}
	}
	u, ok := ast.Unparen(e).(*ast.UnaryExpr)
	if !ok || u.Op != token.ARROW {
		return nil
	}
	return u.X
}

// isTimerChan reports whether ch is a timer's channel: time.After(d) or
// the C field of a *time.Timer (not a ticker's).
func isTimerChan(info *types.Info, ch ast.Expr) bool {
	switch x := ast.Unparen(ch).(type) {
	case *ast.CallExpr:
		return funcKey(calleeFunc(info, x)) == "time.After"
	case *ast.SelectorExpr:
		if x.Sel.Name != "C" {
			return false
		}
		t := info.TypeOf(x.X)
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		n, ok := t.(*types.Named)
		return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "time" && n.Obj().Name() == "Timer"
	}
	return false
}

// hasSelect reports whether body has a select statement outside function
// literals.
func hasSelect(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.SelectStmt:
			found = true
		}
		return !found
	})
	return found
}
