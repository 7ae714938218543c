package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"
)

// Options in a field of a configuration struct that a function takes as
// a parameter and connects with (watermill-nats' NewPublisher(config
// PublisherConfig, ...) calls nats.Connect(config.URL,
// config.NatsOptions...)): the callers decide, so the connect is judged
// at each call, by the field in the struct the call passes (a literal, or
// a local built from one).

// paramFieldSum returns the summary "the caller's options in field f of
// parameter v" for the selector v.f read in the body fb, if v is a
// parameter of fb that the function never changes there (readOnlyStruct).
func (co *connOpts) paramFieldSum(fb *fnBody, sel *ast.SelectorExpr, f *types.Var) (optSum, bool) {
	s := co.info.Selections[sel]
	if s == nil || len(s.Index()) != 1 {
		return optSum{}, false // a promoted field: not followed
	}
	id, ok := ast.Unparen(sel.X).(*ast.Ident)
	if !ok {
		return optSum{}, false
	}
	v, _ := co.info.Uses[id].(*types.Var)
	i := co.paramIndex(fb, v)
	if i < 0 || fb.self == nil || !co.readOnlyStruct(fb, v, f) {
		return optSum{}, false
	}
	return optSum{Buf: bufDefault, Param: i, Field: f.Name()}, true
}

// readOnlyStruct reports whether the struct parameter v of the body fb
// keeps the field f the caller gave it: v is never assigned nor its
// address taken, f is never assigned through v, and every use of v is a
// field read or a method call that cannot change f (a value receiver, or
// a pointer-receiver method of this package that assigns neither f nor
// the whole receiver, and uses it only for its fields).
func (co *connOpts) readOnlyStruct(fb *fnBody, v *types.Var, f *types.Var) bool {
	idx := indexOf(fb)
	if idx.addressed[v] || !co.keepsField(idx, v, f) {
		return false
	}
	return co.strictUses(fb, v, nil, func(m *types.Func) bool {
		mb := co.vals.byFunc[m]
		sig, _ := m.Type().(*types.Signature)
		if mb == nil || sig == nil || sig.Recv() == nil {
			return false
		}
		recv := sig.Recv()
		return !indexOf(mb).addressed[recv] && co.keepsField(indexOf(mb), recv, f) &&
			co.strictUses(mb, recv, nil, noMethod)
	})
}

// keepsField reports whether the index idx has no assignment to v as a
// whole, through *v, or to its field f (v.f = ..., v.f[i] = ...).
func (co *connOpts) keepsField(idx *assignIndex, v, f *types.Var) bool {
	for _, a := range idx.byVar[v] {
		if a.whole || rootsAt(co.info, a.lhs, f) {
			return false
		}
		if _, ok := ast.Unparen(a.lhs).(*ast.StarExpr); ok {
			return false
		}
	}
	return true
}

// rootsAt reports whether the target e is the field f or a part of it.
func rootsAt(info *types.Info, e ast.Expr, f *types.Var) bool {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.SelectorExpr:
			if fieldOf(info, x) == f {
				return true
			}
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		default:
			return false
		}
	}
}

// strictUses reports whether every use of v in the body fb is a field
// read or write, a method call with a value receiver or one method
// accepts, or, with arg, an argument of a call that arg accepts.
func (co *connOpts) strictUses(fb *fnBody, v *types.Var, arg func(*ast.CallExpr, ast.Expr) bool, method func(*types.Func) bool) bool {
	fine := make(map[*ast.Ident]bool)
	all := true
	ast.Inspect(fb.body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			id, isID := ast.Unparen(n.X).(*ast.Ident)
			if !isID || co.info.Uses[id] != v {
				break
			}
			s := co.info.Selections[n]
			switch {
			case s == nil:
			case s.Kind() == types.FieldVal:
				fine[id] = true
			case s.Kind() == types.MethodVal:
				m, _ := s.Obj().(*types.Func)
				if m != nil && (!ptrRecv(m) || method(m)) {
					fine[id] = true
				}
			}
		case *ast.CallExpr:
			for _, a := range n.Args {
				x := ast.Unparen(a)
				if u, ok := x.(*ast.UnaryExpr); ok && u.Op == token.AND {
					x = ast.Unparen(u.X) // &cfg, to a constructor that connects with it
				}
				if id, isID := x.(*ast.Ident); isID && co.info.Uses[id] == v && arg != nil && arg(n, a) {
					fine[id] = true
				}
			}
		case *ast.Ident:
			if co.info.Uses[n] == v && !fine[n] {
				all = false
			}
		}
		return all
	})
	return all
}

// noMethod accepts no pointer-receiver method (strictUses).
func noMethod(*types.Func) bool { return false }

// ptrRecv reports whether the method m has a pointer receiver.
func ptrRecv(m *types.Func) bool {
	sig, _ := m.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil {
		return false
	}
	_, ok := types.Unalias(sig.Recv().Type()).(*types.Pointer)
	return ok
}

// fieldArgSum judges the options in the field name of the struct value
// e that a call passes: a literal (&T{...} too), whose omitted field
// holds none, or a local built from one, with later top-level
// assignments to the field.
func (co *connOpts) fieldArgSum(fb *fnBody, e ast.Expr, name string) optSum {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		if id, ok := ast.Unparen(u.X).(*ast.Ident); ok {
			if v := localVar(co.info, id); v != nil && !isPointer(v.Type()) {
				return co.structLocalField(v, name)
			}
		}
		e = ast.Unparen(u.X)
	}
	switch x := e.(type) {
	case *ast.CompositeLit:
		return co.litFieldSum(fb, x, name)
	case *ast.Ident:
		if v := localVar(co.info, x); v != nil {
			return co.structLocalField(v, name)
		}
	}
	return unknownSum("options in field " + name + " of a value not followed")
}

// litFieldSum judges the field name of the struct literal lit.
func (co *connOpts) litFieldSum(fb *fnBody, lit *ast.CompositeLit, name string) optSum {
	for _, elt := range lit.Elts {
		kv, ok := elt.(*ast.KeyValueExpr)
		if !ok {
			return unknownSum("options in a positional literal")
		}
		if key, ok := kv.Key.(*ast.Ident); ok && key.Name == name {
			return co.exprSum(fb, kv.Value)
		}
	}
	return fixedSum(bufDefault, 0) // no options given
}

// structLocalField judges the field name of the local struct (or pointer
// to one) v: its one initializer is a literal, later
// top-level assignments to the field replace it, and nothing else can
// reach v (its address and the pointer go only to calls that connect
// with it; no method that may change it is called).
func (co *connOpts) structLocalField(v *types.Var, name string) optSum {
	vb := co.vals.bodies[co.vals.bodyOf(v)]
	f := fieldNamed(v.Type(), name)
	if vb == nil || f == nil {
		return unknownSum("options in " + v.Name() + ", not followed")
	}
	idx := indexOf(vb)
	if idx.addressed[v] && !co.addrToConnects(vb, v) {
		return unknownSum("the address of " + v.Name() + " is taken")
	}
	var val, init ast.Expr
	var lit *ast.CompositeLit
	inits := 0
	top := topLevel(vb.body)
	for _, a := range idx.byVar[v] {
		if a.whole {
			inits++
			rhs := a.rhs
			if u, ok := ast.Unparen(rhs).(*ast.UnaryExpr); ok && u.Op == token.AND {
				rhs = u.X
			}
			init = rhs
			lit, _ = ast.Unparen(rhs).(*ast.CompositeLit)
			if vs, ok := a.node.(*ast.ValueSpec); ok && len(vs.Values) == 0 {
				lit = &ast.CompositeLit{} // var cfg T: the zero value
			}
			continue
		}
		sel, ok := ast.Unparen(a.lhs).(*ast.SelectorExpr)
		if !ok || fieldOf(co.info, sel) != f || localVar(co.info, sel.X) != v {
			if rootsAt(co.info, a.lhs, f) {
				return unknownSum("field " + name + " of " + v.Name() + " changed in part")
			}
			continue
		}
		if a.rhs == nil || a.tok != token.ASSIGN || a.inLit || !top[a.node] || mentions(co.info, a.rhs, v) {
			return unknownSum("field " + name + " of " + v.Name() + " set in a way not followed")
		}
		val = a.rhs
	}
	var folded *optSum
	if call, ok := ast.Unparen(init).(*ast.CallExpr); ok && inits == 1 {
		if _, _, adding := co.adder(f); adding && val == nil {
			// co := resolveCreateOptions(t, opts): what opts add.
			if sum, ok := co.foldSum(vb, call, f); ok {
				folded = &sum
			}
		}
		if fn := calleeFunc(co.info, call); fn != nil && folded == nil {
			return unknownSum("field " + name + " of " + v.Name() + ", built by " + fn.Name() + ", not followed")
		}
	}
	if inits != 1 || lit == nil && folded == nil {
		return unknownSum(v.Name() + " not built from one literal")
	}
	passed := func(call *ast.CallExpr, arg ast.Expr) bool {
		// A struct passed by value is a copy; a pointer (also &cfg,
		// given to one constructor after another) only to a function
		// that connects with it and does not change it.
		if u, ok := ast.Unparen(arg).(*ast.UnaryExpr); ok && u.Op == token.AND {
			return co.connectsWith(call, arg)
		}
		return !isPointer(v.Type()) || co.connectsWith(call, arg)
	}
	if !co.strictUses(vb, v, passed, noMethod) {
		return unknownSum(v.Name() + " passed on or changed by a method")
	}
	if folded != nil {
		return *folded
	}
	if val != nil {
		return co.exprSum(vb, val)
	}
	return co.litFieldSum(vb, lit, name)
}

// isPointer reports whether t is a pointer type.
func isPointer(t types.Type) bool {
	_, ok := types.Unalias(t).(*types.Pointer)
	return ok
}

// structOf returns the struct type of t or of what it points to.
func structOf(t types.Type) *types.Struct {
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		t = p.Elem()
	}
	st, _ := t.Underlying().(*types.Struct)
	return st
}

// hasOptionField reports whether t is a struct (or pointer to one) with
// a field of option type.
func hasOptionField(t types.Type) bool {
	st := structOf(t)
	if st == nil {
		return false
	}
	for i := range st.NumFields() {
		if optionKind(st.Field(i).Type()) != optNone {
			return true
		}
	}
	return false
}

// fieldNamed returns the field name of the struct t (or pointer to one).
func fieldNamed(t types.Type, name string) *types.Var {
	st := structOf(t)
	if st == nil {
		return nil
	}
	for i := range st.NumFields() {
		if st.Field(i).Name() == name {
			return st.Field(i)
		}
	}
	return nil
}
