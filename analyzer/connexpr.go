package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// The expression side of the connection-options summary: what an
// expression, a call, a local variable or a slice of options contributes.

// exprSum judges an expression of option type (nats.Option,
// []nats.Option or nats.Options) in the body fb.
func (co *connOpts) exprSum(fb *fnBody, e ast.Expr) optSum {
	e = ast.Unparen(e)
	kind := optionKind(co.info.TypeOf(e))
	switch x := e.(type) {
	case *ast.CompositeLit:
		if kind == optList {
			return co.seqSum(fb, x.Elts)
		}
		if kind == optOptions {
			s, n := optionsInit(co.info, x).result()
			return fixedSum(s, n)
		}
	case *ast.FuncLit:
		fb := co.vals.bodies[x.Body]
		if fb == nil {
			return unknownSum("options built in a way not followed")
		}
		s, n := assignedBuf(co.info, indexOf(fb))
		return fixedSum(s, n)
	case *ast.CallExpr:
		return co.callExprSum(fb, x, kind)
	case *ast.Ident:
		v, ok := co.info.Uses[x].(*types.Var)
		if !ok {
			return unknownSum("options in " + x.Name + ", not followed")
		}
		if i := co.paramIndex(fb, v); i >= 0 {
			if kind == optOptions {
				if !co.readOnlyParam(fb, v) {
					return unknownSum("options value from parameter " + v.Name() + ", changed or passed on")
				}
				return optSum{Buf: bufDefault, Param: i}
			}
			param := optSum{Buf: bufDefault, Param: i}
			if len(indexOf(fb).byVar[v]) > 0 {
				// opts = append(opts, ...) in a helper that returns them.
				return co.localSumFrom(fb, v, kind, param)
			}
			return param
		}
		if sum, ok := co.outerParamSum(fb, v, kind); ok {
			return sum
		}
		return co.localSum(fb, v, kind)
	case *ast.SelectorExpr:
		if s := co.info.Selections[x]; s != nil && s.Kind() == types.FieldVal {
			if f, ok := s.Obj().(*types.Var); ok {
				if co.ctorHit(f, x) {
					return fixedSum(bufDefault, 0) // the constructor's caller decides
				}
				sum := unknownSum("exported field " + ownerName(co.pass.Pkg, co.info.TypeOf(x.X)) + f.Name() + ", which other packages may set: look at where they make " + strings.TrimSuffix(ownerName(co.pass.Pkg, co.info.TypeOf(x.X)), ".") + " values")
				if !f.Exported() || f.Pkg() == co.pass.Pkg && !exportedOwner(co.info.TypeOf(x.X)) {
					sum = co.fieldSum(f)
				}
				if sum.Buf == bufUnknown {
					// config.NatsOptions of a parameter: the caller's.
					if ps, ok := co.paramFieldSum(fb, x, f); ok {
						return ps
					}
					// co.connectOptions of co := resolveCreateOptions(opts).
					if _, _, adding := co.adder(f); adding && localVar(co.info, x.X) != nil && co.paramIndex(fb, localVar(co.info, x.X)) < 0 {
						return co.structLocalField(localVar(co.info, x.X), f.Name())
					}
				}
				return sum
			}
		}
	case *ast.UnaryExpr:
		if x.Op == token.AND {
			return co.addrSum(fb, x)
		}
	case *ast.StarExpr:
		return unknownSum("options read through a pointer")
	}
	return unknownSum("options built in a way not followed")
}

// ownerName returns "T." for a field of the named struct type t (or a
// pointer to it), "" if t is not named.
func ownerName(pkg *types.Package, t types.Type) string {
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok {
		return ""
	}
	return types.TypeString(n, func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		return p.Name()
	}) + "."
}

// exportedOwner reports whether t (a struct or a pointer to one) is an
// exported named type.
func exportedOwner(t types.Type) bool {
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	return !ok || n.Obj().Exported()
}

// callExprSum judges a call yielding options: a nats.go option function,
// nats.GetDefaultOptions, append, or a function returning options.
func (co *connOpts) callExprSum(fb *fnBody, call *ast.CallExpr, kind optKind) optSum {
	if tv, ok := co.info.Types[call.Fun]; ok && tv.IsBuiltin() {
		if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok && id.Name == "append" && len(call.Args) > 0 {
			sum := co.exprSum(fb, call.Args[0])
			if call.Ellipsis.IsValid() {
				return sum.then(co.exprSum(fb, call.Args[len(call.Args)-1]))
			}
			return sum.then(co.seqSum(fb, call.Args[1:]))
		}
		if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok && id.Name == "make" && kind == optList {
			return fixedSum(bufDefault, 0) // make([]nats.Option, 0, n): no option yet
		}
		return unknownSum("options built in a way not followed")
	}
	fn := calleeFunc(co.info, call)
	if fn == nil {
		return unknownSum("options from a function value")
	}
	if fn.Pkg() != nil && fn.Pkg().Path() == natsPath {
		switch kind {
		case optOne:
			s, n := optionArg(co.info, call)
			if s == bufUnknown {
				return unknownSum("a non-constant ReconnectBufSize")
			}
			return fixedSum(s, n)
		case optOptions:
			s, n := optionsInit(co.info, call).result()
			if s == bufUnknown {
				return unknownSum("options from " + fn.Name())
			}
			return fixedSum(s, n)
		}
		return unknownSum("options from " + fn.Name())
	}
	if s, ok := co.funcSum(fn); ok {
		return co.callSum(fb, call, s)
	}
	return unknownSum("options from " + fn.Name() + ", not followed")
}

// localSum judges a local variable of option type from its assignments in
// source order: an option slice built by literals, appends to itself and
// calls returning options; a nats.Options value from its initializer and
// the assignments to its fields.
func (co *connOpts) localSum(fb *fnBody, v *types.Var, kind optKind) optSum {
	return co.localSumFrom(fb, v, kind, fixedSum(bufDefault, 0))
}

// localSumFrom is localSum for a variable holding sum before its
// assignments (a parameter: the caller's options).
func (co *connOpts) localSumFrom(fb *fnBody, v *types.Var, kind optKind, sum optSum) optSum {
	vb := co.vals.bodies[co.vals.bodyOf(v)]
	if vb == nil {
		return unknownSum("options in " + v.Name() + ", not followed")
	}
	idx := indexOf(vb)
	if idx.addressed[v] && (kind != optOptions || !co.addrToConnects(vb, v)) {
		return unknownSum("the address of " + v.Name() + " is taken")
	}
	if isOptionsPtr(v.Type()) && !co.confinedPtr(vb, v) {
		return unknownSum("options pointer " + v.Name() + " passed on or copied")
	}
	if kind == optOptions {
		return co.localOptionsSum(vb, v)
	}
	n := 0
	if sum.Param >= 0 {
		n = 1 // the parameter's own value
	}
	top := topLevel(vb.body)
	for _, a := range idx.byVar[v] {
		before := sum
		switch {
		case !a.whole:
			return unknownSum(v.Name() + " changed by index")
		case a.inLit:
			return unknownSum(v.Name() + " assigned in a function literal")
		case a.rhs == nil:
			as, ok := a.node.(*ast.AssignStmt)
			if !ok {
				continue // var opts []nats.Option
			}
			call, ok := ast.Unparen(as.Rhs[0]).(*ast.CallExpr)
			if !ok || len(as.Rhs) != 1 {
				return unknownSum(v.Name() + " assigned in a way not followed")
			}
			sum = co.callExprSum(vb, call, kind)
		default:
			if call, ok := ast.Unparen(a.rhs).(*ast.CallExpr); ok && isAppendTo(co.info, call, v) {
				// opts = append(opts, ...): the elements added.
				if call.Ellipsis.IsValid() {
					sum = sum.then(co.exprSum(vb, call.Args[len(call.Args)-1]))
				} else {
					sum = sum.then(co.seqSum(vb, call.Args[1:]))
				}
				break
			}
			if call, ok := ast.Unparen(a.rhs).(*ast.CallExpr); ok {
				if s, ok := co.passedThrough(call, v); ok {
					// opts = setupConnOptions(opts): the helper's
					// options around the ones so far.
					sum = s.given(sum)
					break
				}
			}
			if mentions(co.info, a.rhs, v) {
				return unknownSum(v.Name() + " assigned from itself")
			}
			sum = co.exprSum(vb, a.rhs)
		}
		if sum.Buf == bufUnknown {
			return sum
		}
		if !top[a.node] && sum != before {
			// if tls { opts = append(opts, ...) }: on some paths only.
			return unknownSum(v.Name() + " set on some paths only")
		}
		n++
	}
	if n == 0 {
		return unknownSum("options in " + v.Name() + ", not followed")
	}
	return sum
}

// passedThrough returns what a call of a function of the package that
// takes options and returns them with its own (opts =
// setupConnOptions(opts)) makes of v, passed as that parameter and
// mentioned nowhere else in the call.
func (co *connOpts) passedThrough(call *ast.CallExpr, v *types.Var) (optSum, bool) {
	fn := calleeFunc(co.info, call)
	if fn == nil || fn.Pkg() != co.pass.Pkg {
		return optSum{}, false
	}
	s, ok := co.funcSum(fn)
	if !ok || s.Buf == bufUnknown {
		return optSum{}, false
	}
	if s.Param < 0 {
		return s, true // the helper's own setting comes last and decides
	}
	if s.Param >= len(call.Args) {
		return optSum{}, false
	}
	for i, a := range call.Args {
		if (i == s.Param) != (localVar(co.info, a) == v) || i != s.Param && mentions(co.info, a, v) {
			return optSum{}, false
		}
	}
	if sig := sigOf(co.info, call.Fun); sig == nil || (sig.Variadic() && s.Param == sig.Params().Len()-1 && !call.Ellipsis.IsValid()) {
		return optSum{}, false
	}
	return s, true
}

// localOptionsSum judges a local nats.Options variable: its one
// initializer (a literal, nats.GetDefaultOptions(), a field or a function
// returning options), then the assignments to its fields in source order.
func (co *connOpts) localOptionsSum(vb *fnBody, v *types.Var) optSum {
	idx := indexOf(vb)
	var init ast.Expr
	inits := 0
	for _, a := range idx.byVar[v] {
		if a.whole {
			inits++
			init = a.rhs
			if vs, ok := a.node.(*ast.ValueSpec); ok && len(vs.Values) == 0 {
				init = &ast.CompositeLit{} // var o nats.Options: the zero value
			}
		}
	}
	if inits != 1 || init == nil {
		return unknownSum("options value " + v.Name() + " assigned more than once")
	}
	var o optState
	if lit, ok := init.(*ast.CompositeLit); ok && lit.Type == nil && len(lit.Elts) == 0 {
		o = optState{allow: triFalse, buf: bufDefault}
	} else if o = optionsInit(co.info, init); o.allow == triUnknown && o.buf == bufDefault {
		// opts := s.natsOpts, opts := cfg.natsOptions()
		s := co.exprSum(vb, init)
		switch {
		case s.Buf == bufUnknown || s.Param >= 0:
			return unknownSum(s.Why)
		case s.Buf == bufDisabled:
			o = optState{allow: triUnknown, buf: bufDisabled}
		default:
			o = optState{allow: triTrue, buf: s.Buf, size: s.Size}
		}
	}
	for _, a := range idx.byVar[v] {
		if _, ok := a.node.(*ast.AssignStmt); !ok || a.whole {
			continue
		}
		sel, ok := ast.Unparen(a.lhs).(*ast.SelectorExpr)
		if !ok {
			continue
		}
		if id, ok := ast.Unparen(sel.X).(*ast.Ident); !ok || co.info.Uses[id] != v {
			continue
		}
		assignField(co.info, &o, &a, sel)
	}
	s, n := o.result()
	if s == bufUnknown {
		if why := co.nonConstBuf(vb, v, init); why != "" {
			return unknownSum("options value " + v.Name() + ": " + why)
		}
		return unknownSum("options value " + v.Name() + " not followed")
	}
	return fixedSum(s, n)
}

// nonConstBuf says which buffer setting of the local nats.Options v, in
// the body vb, is not a constant, and where: in its literal init
// (ReconnectBufSize: o.ReconnectBufSize) or assigned to its field later;
// "" if none is.
func (co *connOpts) nonConstBuf(vb *fnBody, v *types.Var, init ast.Expr) string {
	check := func(name string, val ast.Expr) string {
		if !bufferFields[name] || co.info.Types[val].Value != nil {
			return ""
		}
		return "its " + name + " is " + types.ExprString(val) + ", not a constant, at " + co.where(val.Pos(), vb)
	}
	if lit, ok := ast.Unparen(init).(*ast.CompositeLit); ok {
		for _, e := range lit.Elts {
			if kv, ok := e.(*ast.KeyValueExpr); ok {
				if id, ok := kv.Key.(*ast.Ident); ok {
					if why := check(id.Name, kv.Value); why != "" {
						return why
					}
				}
			}
		}
	}
	for _, a := range indexOf(vb).byVar[v] {
		if sel, ok := ast.Unparen(a.lhs).(*ast.SelectorExpr); ok && !a.whole && a.rhs != nil {
			if why := check(sel.Sel.Name, a.rhs); why != "" {
				return why
			}
		}
	}
	return ""
}
