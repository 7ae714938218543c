package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"
)

// Options that functional options add to a field (orbit.go's ntf-client:
// WithConnectOptions(opts ...nats.Option) returns a literal appending
// opts to createOptions.connectOptions; resolveCreateOptions applies each
// CreateOption of its parameter to a fresh createOptions; the helpers
// connect with the field). When the field is unexported and only that
// literal stores it (an adding field), its content is what the values of
// the adder that were applied add, so a connect with it is judged at the
// calls that pass the option values: each call of the adder adds its
// arguments, each value of another function of the package that cannot
// reach the field adds none, anything else is not followed. Values from
// other packages are not followed (no fact carries them).

// adder returns the function w whose literal is the only store to the
// field f, appending w's parameter p (o.f = append(o.f, p...)), if f is
// an adding field: unexported, set by no composite literal, never
// changed in place, and w's body the return of that literal alone.
func (co *connOpts) adder(f *types.Var) (w *types.Func, p int, ok bool) {
	if f.Exported() || f.Pkg() != co.pass.Pkg || optionKind(f.Type()) != optList || co.litStored[f] {
		return nil, 0, false
	}
	if _, bad := co.fieldBad[f]; bad {
		return nil, 0, false
	}
	stores := co.fieldStores[f]
	if len(stores) != 1 || stores[0].fb == nil || stores[0].fb.lit == nil {
		return nil, 0, false
	}
	st := stores[0]
	call, isCall := ast.Unparen(st.rhs).(*ast.CallExpr)
	if !isCall || !call.Ellipsis.IsValid() || len(call.Args) != 2 || fieldOf(co.info, call.Args[0]) != f {
		return nil, 0, false
	}
	if id, isID := ast.Unparen(call.Fun).(*ast.Ident); !isID || id.Name != "append" {
		return nil, 0, false
	}
	// The literal's one statement: o.f = append(o.f, p...), o its own
	// parameter.
	as, isAssign := oneStmt(st.fb.lit.Body).(*ast.AssignStmt)
	if !isAssign || len(as.Lhs) != 1 || len(as.Rhs) != 1 || ast.Unparen(as.Rhs[0]) != call {
		return nil, 0, false
	}
	o := localVar(co.info, ast.Unparen(call.Args[0]).(*ast.SelectorExpr).X)
	if lhs, isSel := ast.Unparen(as.Lhs[0]).(*ast.SelectorExpr); !isSel || o == nil || localVar(co.info, lhs.X) != o || co.paramIndex(st.fb, o) < 0 {
		return nil, 0, false
	}
	for _, fb := range co.vals.list {
		if fb.self == nil || len(fb.body.List) != 1 {
			continue
		}
		ret, isRet := fb.body.List[0].(*ast.ReturnStmt)
		if !isRet || len(ret.Results) != 1 || litOf(co.info, ret.Results[0]) != st.fb.lit {
			continue
		}
		i := co.paramIndex(fb, localVar(co.info, call.Args[1]))
		if i < 0 || len(indexOf(fb).byVar[localVar(co.info, call.Args[1])]) > 0 || !co.callsOnce(fb.self, f) {
			return nil, 0, false
		}
		return fb.self, i, true
	}
	return nil, 0, false
}

// callsOnce reports whether the value the adder w returns is of a named
// function type (createOpt) every method of which that takes a pointer to
// f's struct calls the value with it once and does nothing else (func (f
// createOpt) applyCreate(o *createOptions) { f(o) }): applying the value
// appends its options once.
func (co *connOpts) callsOnce(w *types.Func, f *types.Var) bool {
	sig, _ := w.Type().(*types.Signature)
	if sig == nil || sig.Results().Len() != 1 {
		return false
	}
	named, ok := types.Unalias(sig.Results().At(0).Type()).(*types.Named)
	if !ok {
		return false
	}
	if types.IsInterface(named) {
		// return createOpt(func ...): the conversion's type.
		ret, _ := oneStmt(co.vals.byFunc[w].body).(*ast.ReturnStmt)
		named, ok = types.Unalias(co.info.TypeOf(ret.Results[0])).(*types.Named)
		if !ok {
			return false
		}
	}
	if _, isFunc := named.Underlying().(*types.Signature); !isFunc {
		return false
	}
	ms := types.NewMethodSet(types.NewPointer(named))
	for i := range ms.Len() {
		m, _ := ms.At(i).Obj().(*types.Func)
		msig, _ := m.Type().(*types.Signature)
		if msig == nil || !takesStructOf(msig, f) {
			continue
		}
		mb := co.vals.byFunc[m]
		if mb == nil {
			return false
		}
		es, _ := oneStmt(mb.body).(*ast.ExprStmt)
		c, _ := ast.Unparen(exprOf(es)).(*ast.CallExpr)
		if c == nil || len(c.Args) != 1 || localVar(co.info, c.Fun) != msig.Recv() || localVar(co.info, c.Args[0]) != msig.Params().At(0) {
			return false
		}
	}
	return true
}

// takesStructOf reports whether sig has a parameter pointing to a struct
// with the field f.
func takesStructOf(sig *types.Signature, f *types.Var) bool {
	for i := range sig.Params().Len() {
		if st := structOf(sig.Params().At(i).Type()); st != nil && hasField(st, f) {
			return true
		}
	}
	return false
}

// exprOf returns the expression of the statement es, or nil.
func exprOf(es *ast.ExprStmt) ast.Expr {
	if es == nil {
		return nil
	}
	return es.X
}

// oneStmt returns the one statement of body, or nil.
func oneStmt(body *ast.BlockStmt) ast.Stmt {
	if len(body.List) != 1 {
		return nil
	}
	return body.List[0]
}

// litOf returns the function literal e is, or converts to a type
// (createOpt(func ...)), or nil.
func litOf(info *types.Info, e ast.Expr) *ast.FuncLit {
	switch x := ast.Unparen(e).(type) {
	case *ast.FuncLit:
		return x
	case *ast.CallExpr:
		if tv, ok := info.Types[x.Fun]; ok && tv.IsType() && len(x.Args) == 1 {
			return litOf(info, x.Args[0])
		}
	}
	return nil
}

// addingField returns the adding field of the package named name.
func (co *connOpts) addingField(name string) *types.Var {
	for f := range co.fieldStores {
		if f.Name() == name {
			if _, _, ok := co.adder(f); ok {
				return f
			}
		}
	}
	return nil
}

// addsSum judges what the option value e, applied, adds to the adding
// field f: a call of its adder, the arguments; a call of another
// function of the package whose values cannot reach the field, nothing.
func (co *connOpts) addsSum(fb *fnBody, e ast.Expr, f *types.Var) optSum {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return unknownSum("an option value not followed")
	}
	fn := calleeFunc(co.info, call)
	if fn == nil || fn.Pkg() != co.pass.Pkg {
		return unknownSum("an option value not followed")
	}
	if w, p, _ := co.adder(f); fn == w {
		sig := sigOf(co.info, call.Fun)
		switch {
		case sig.Variadic() && p == sig.Params().Len()-1 && call.Ellipsis.IsValid():
			return co.exprSum(fb, call.Args[len(call.Args)-1])
		case sig.Variadic() && p == sig.Params().Len()-1:
			return co.seqSum(fb, call.Args[min(p, len(call.Args)):])
		case p < len(call.Args):
			return co.exprSum(fb, call.Args[p])
		}
		return unknownSum("options passed in a way not followed")
	}
	if co.addsNone(fn, f) {
		return fixedSum(bufDefault, 0)
	}
	return unknownSum("the option value of " + fn.Name() + ", not followed")
}

// addsNone reports whether the values fn returns cannot reach the field
// f: each is a function literal (or its conversion), or a composite
// literal of a named type, and every function that such a value hands a
// pointer to f's struct (the literal; the type's methods) only uses it
// for fields (inert).
func (co *connOpts) addsNone(fn *types.Func, f *types.Var) bool {
	fb := co.vals.byFunc[fn]
	if fb == nil {
		return false
	}
	n := 0
	all := true
	ast.Inspect(fb.body, func(node ast.Node) bool {
		r, ok := node.(*ast.ReturnStmt)
		if !ok || !all {
			return all
		}
		n++
		if len(r.Results) != 1 {
			all = false
			return false
		}
		e := ast.Unparen(r.Results[0])
		if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
			e = ast.Unparen(u.X)
		}
		if lit := litOf(co.info, e); lit != nil {
			all = co.inertBody(co.vals.bodies[lit.Body], f)
			return false
		}
		cl, ok := e.(*ast.CompositeLit)
		named, isNamed := types.Unalias(co.info.TypeOf(e)).(*types.Named)
		if !ok || cl == nil || !isNamed {
			all = false
			return false
		}
		ms := types.NewMethodSet(types.NewPointer(named))
		for i := range ms.Len() {
			m, _ := ms.At(i).Obj().(*types.Func)
			if m == nil || m.Pkg() != co.pass.Pkg || !co.inertBody(co.vals.byFunc[m], f) {
				all = false
			}
		}
		return false
	})
	return all && n > 0
}

// inertBody reports whether the function of the body fb uses each of
// its parameters of pointer-to-f's-struct type only for its fields.
func (co *connOpts) inertBody(fb *fnBody, f *types.Var) bool {
	if fb == nil {
		return false
	}
	var sig *types.Signature
	if fb.self != nil {
		sig, _ = fb.self.Type().(*types.Signature)
	} else {
		sig, _ = co.info.TypeOf(fb.lit).(*types.Signature)
	}
	if sig == nil {
		return false
	}
	for i := range sig.Params().Len() {
		v := sig.Params().At(i)
		if st := structOf(v.Type()); st == nil || !hasField(st, f) {
			continue
		}
		idx := indexOf(fb)
		if idx.addressed[v] || !co.keepsField(idx, v, f) || !co.strictUses(fb, v, nil, noMethod) {
			return false
		}
	}
	return true
}

// hasField reports whether f is a field of st.
func hasField(st *types.Struct, f *types.Var) bool {
	for i := range st.NumFields() {
		if st.Field(i) == f {
			return true
		}
	}
	return false
}

// isValueList reports whether t is a slice of a named interface type,
// which may hold option values (func WithServer(..., opts
// ...CreateOption)).
func isValueList(t types.Type) bool {
	s, ok := types.Unalias(t).(*types.Slice)
	if !ok {
		return false
	}
	n, ok := types.Unalias(s.Elem()).(*types.Named)
	return ok && types.IsInterface(n)
}
