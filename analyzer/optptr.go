package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"
)

// A nats.Options value handed to a function that connects with it
// (graft's NewNatsRpc(opts *nats.Options) calls opts.Connect()): the
// function's connect is judged at its calls when it only reads the
// parameter, and a call is judged by the value it passes when nothing
// else can change that value: a pointer local used only for its fields
// and in such calls, a value whose address goes only to such calls.

// readOnlyParam reports whether the nats.Options parameter v (a value or
// a pointer) of the body fb is only read: never assigned, its fields
// never assigned, its address never taken, and every use of it is the
// operand of a selector (opts.Url, opts.Connect(), with its value
// receiver), so that the options connected with are the caller's.
func (co *connOpts) readOnlyParam(fb *fnBody, v *types.Var) bool {
	idx := indexOf(fb)
	if len(idx.byVar[v]) > 0 || idx.addressed[v] {
		return false
	}
	return co.strictUses(fb, v, nil, noMethod)
}

// connectsWith reports whether the call passes arg as the parameter of
// options that its callee connects with and only reads (connectsOf).
func (co *connOpts) connectsWith(call *ast.CallExpr, arg ast.Expr) bool {
	fn := calleeFunc(co.info, call)
	if fn == nil || call.Ellipsis.IsValid() {
		return false
	}
	s, ok := co.connectsOf(fn)
	if !ok || s.Param < 0 || s.Param >= len(call.Args) {
		return false
	}
	return call.Args[s.Param] == arg
}

// confinedPtr reports whether the local v, a *nats.Options, is used in
// its body vb only for its fields (and value-receiver methods) and as the
// options of calls that
// connect with them: no alias or other function can change what it
// points to.
func (co *connOpts) confinedPtr(vb *fnBody, v *types.Var) bool {
	return co.strictUses(vb, v, co.connectsWith, noMethod)
}

// addrToConnects reports whether every &v in the body vb, v a local
// nats.Options, is an argument of a call that connects with it.
func (co *connOpts) addrToConnects(vb *fnBody, v *types.Var) bool {
	for _, a := range indexOf(vb).all {
		u, ok := a.node.(*ast.UnaryExpr)
		if !ok || a.v != v {
			continue
		}
		if !a.whole || a.call == nil || !co.connectsWith(a.call, u) {
			return false
		}
	}
	return true
}

// isOptionsPtr reports whether t is *nats.Options.
func isOptionsPtr(t types.Type) bool {
	p, ok := types.Unalias(t).(*types.Pointer)
	return ok && optionKind(p.Elem()) == optOptions
}

// addrSum judges &x of option type: the literal &nats.Options{...}, or a
// local nats.Options whose address goes only to calls that connect with
// it (localSum checks that).
func (co *connOpts) addrSum(fb *fnBody, u *ast.UnaryExpr) optSum {
	switch x := ast.Unparen(u.X).(type) {
	case *ast.CompositeLit:
		return co.exprSum(fb, x)
	case *ast.Ident:
		if v := localVar(co.info, x); v != nil {
			return co.localSum(fb, v, optOptions)
		}
		return unknownSum("options in package variable " + x.Name + ", which any package may change")
	case *ast.SelectorExpr:
		if v, ok := co.info.Uses[x.Sel].(*types.Var); ok && !v.IsField() {
			return unknownSum("options in package variable " + x.Sel.Name + ", which any package may change")
		}
	}
	if u.Op != token.AND {
		return unknownSum("options built in a way not followed")
	}
	return unknownSum("options read through a pointer")
}
