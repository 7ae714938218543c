package analyzer

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
)

// Receive paths the receiver check follows beyond one body: a callback
// held in a variable assigned more than once (every value is a handler),
// and messages that travel on a channel (given to ChanSubscribe, or sent
// on by a callback) to where the package receives them, in another
// method too. What it still cannot follow (a callback in a field or a
// parameter, a message handed to a function value) is listed with -audit
// as "unjudged", never passed in silence.

// handlerBody is one function a callback may be: its body and the
// parameter holding the message (nil: it takes none).
type handlerBody struct {
	body  *ast.BlockStmt
	param *types.Var
}

// handlers returns the bodies the callback e may be, and why the check
// cannot follow it (or part of it), if it cannot: a function literal, a
// function or method of the package, a local variable assigned such
// values (once or more), through conversions.
func (c *recvCheck) handlers(e ast.Expr) ([]handlerBody, string) {
	for {
		e = ast.Unparen(e)
		call, ok := e.(*ast.CallExpr)
		if !ok {
			break
		}
		tv, ok := c.info.Types[call.Fun]
		if !ok || !tv.IsType() || len(call.Args) != 1 {
			fn := calleeFunc(c.info, call)
			if fn != nil && fn.Pkg() != nil && isKnownShim(fn.Pkg().Path()) {
				return nil, "" // shim.Handler and the like: the shim's
			}
			if d := c.decls[fn]; d != nil {
				// s.ServeMsg(nc): a function of the package returning
				// literals, each a handler.
				if lits := returnedLits(d.Body); lits != nil {
					var hs []handlerBody
					for _, lit := range lits {
						hs = append(hs, handlerBody{lit.Body, c.msgParam(lit.Type)})
					}
					return hs, ""
				}
			}
			return nil, "its callback is made by " + types.ExprString(call.Fun) + ", which the check cannot follow"
		}
		e = call.Args[0]
	}
	switch x := e.(type) {
	case *ast.FuncLit:
		return []handlerBody{{x.Body, c.msgParam(x.Type)}}, ""
	case *ast.Ident, *ast.SelectorExpr:
		switch obj := objectOf(c.info, x).(type) {
		case *types.Func:
			if d := c.decls[obj]; d != nil {
				return []handlerBody{{d.Body, c.msgParam(d.Type)}}, ""
			}
			return nil, "its callback is " + funcName(c.pass.Pkg, obj) + ", of another package"
		case *types.Var:
			if lit := c.lits[obj]; lit != nil {
				return []handlerBody{{lit.Body, c.msgParam(lit.Type)}}, ""
			}
			if vals := c.values[obj]; c.multi[obj] && len(vals) > 0 && localVar(c.info, x) != nil {
				var hs []handlerBody
				why := ""
				for _, v := range vals {
					if v == nil {
						return hs, "its callback " + obj.Name() + " is assigned a value the check cannot follow"
					}
					sub, w := c.handlers(v)
					hs = append(hs, sub...)
					if w != "" && why == "" {
						why = w
					}
				}
				return hs, why
			}
			switch {
			case obj.IsField():
				return nil, "its callback is field " + obj.Name() + ", set where the check cannot follow"
			case localVar(c.info, x) == nil:
				return nil, "its callback is package variable " + obj.Name()
			}
			return nil, "its callback comes from " + obj.Name() + ", which the check cannot follow (a parameter, or a value it does not see)"
		}
	}
	return nil, "its callback is " + types.ExprString(e) + ", which the check cannot follow"
}

// returnedLits returns the function literals body returns, or nil unless
// every return statement (outside function literals) returns one.
func returnedLits(body *ast.BlockStmt) []*ast.FuncLit {
	var lits []*ast.FuncLit
	all := true
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			lit, ok := (*ast.FuncLit)(nil), len(n.Results) == 1
			if ok {
				lit, ok = ast.Unparen(n.Results[0]).(*ast.FuncLit)
			}
			if !ok {
				all = false
			}
			lits = append(lits, lit)
		}
		return all
	})
	if !all || len(lits) == 0 {
		return nil
	}
	return lits
}

// fieldChan judges the messages of a channel subscription whose channel,
// arg, is not a local variable (a struct field: subscribed in one method,
// read in another), where the package receives from it.
func (c *recvCheck) fieldChan(arg ast.Expr) (*recvUse, string) {
	v := chanVar(c.info, arg)
	if v == nil {
		return nil, "its channel " + types.ExprString(arg) + " is not followed"
	}
	u := c.chanUse(v)
	return u, u.unfollowed
}

// chanUse reads, in every function of the package, what is done with the
// messages received from the channel v (a field or a variable; also
// through a local copy, ch := s.msgs): r := <-ch, case m := <-ch, for m
// := range ch.
func (c *recvCheck) chanUse(v *types.Var) *recvUse {
	if c.chans == nil {
		c.chans = make(map[*types.Var]*recvUse)
	}
	if u, ok := c.chans[v]; ok {
		return u
	}
	c.chans[v] = &recvUse{} // a channel fed from its own reader adds nothing
	u := &recvUse{}
	found := false
	for _, d := range c.decls {
		starts := c.chanReceives(d.Body, v)
		if len(starts) == 0 {
			continue
		}
		found = true
		du := c.body(d.Body, starts)
		u.merge(du)
		if u.unfollowed == "" {
			u.unfollowed = du.unfollowed
		}
	}
	if !found {
		u.unfollowed = "its messages go on channel " + v.Name() + ", which nothing in the package receives from"
	}
	c.chans[v] = u
	return u
}

// chanReceives returns the variables of body that receive a value from
// the channel v, or from a local copy of it.
func (c *recvCheck) chanReceives(body *ast.BlockStmt, v *types.Var) []*types.Var {
	aliases := map[*types.Var]bool{v: true}
	is := func(e ast.Expr) bool {
		w := chanVar(c.info, e)
		return w != nil && aliases[w]
	}
	ast.Inspect(body, func(n ast.Node) bool {
		if a, ok := n.(*ast.AssignStmt); ok && len(a.Lhs) == 1 && len(a.Rhs) == 1 && is(a.Rhs[0]) {
			if w := localVar(c.info, a.Lhs[0]); w != nil {
				aliases[w] = true
			}
		}
		return true
	})
	var out []*types.Var
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if len(n.Rhs) == 1 && len(n.Lhs) >= 1 {
				if u, ok := ast.Unparen(n.Rhs[0]).(*ast.UnaryExpr); ok && u.Op == token.ARROW && is(u.X) {
					out = append(out, c.vars(n.Lhs[0])...)
				}
			}
		case *ast.RangeStmt:
			if n.Key != nil && is(n.X) {
				out = append(out, c.vars(n.Key)...)
			}
		}
		return true
	})
	return out
}

// unknownCallee says whether call hands its argument to code the check
// cannot read (a function value, an interface method), and how to name it.
func (c *recvCheck) unknownCallee(call *ast.CallExpr) (string, bool) {
	if tv, ok := c.info.Types[call.Fun]; ok && tv.IsType() {
		return "", false
	}
	fn := calleeFunc(c.info, call)
	if fn == nil {
		if _, ok := ast.Unparen(call.Fun).(*ast.FuncLit); ok {
			return "", false
		}
		return fmt.Sprintf("the message goes to %s, a function value the check cannot follow", types.ExprString(call.Fun)), true
	}
	if sig, ok := fn.Type().(*types.Signature); ok && sig.Recv() != nil && types.IsInterface(sig.Recv().Type()) && fn.Pkg() != nil && !isNATSPackage(fn.Pkg().Path()) {
		return fmt.Sprintf("the message goes to %s, an interface method the check cannot follow", types.ExprString(call.Fun)), true
	}
	return "", false
}
