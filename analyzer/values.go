package analyzer

import (
	"go/ast"
	"go/types"
)

// tracksValues reports whether the values assigned to v are recorded: a
// variable of function or interface type.
func tracksValues(v *types.Var) bool {
	switch v.Type().Underlying().(type) {
	case *types.Signature, *types.Interface:
		return true
	}
	return false
}

// fieldStores records the values stored in unexported fields of function
// or interface type: assignments and composite literals. A field whose
// address is taken is not followed.
func (st *state) fieldStores(n ast.Node) {
	info := st.info
	field := func(e ast.Expr) *types.Var {
		sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
		if !ok {
			return nil
		}
		s := info.Selections[sel]
		if s == nil || s.Kind() != types.FieldVal {
			return nil
		}
		f, _ := s.Obj().(*types.Var)
		if f == nil || f.Exported() || !tracksValues(f) {
			return nil
		}
		return f
	}
	switch n := n.(type) {
	case *ast.AssignStmt:
		for i, l := range n.Lhs {
			if f := field(l); f != nil {
				if len(n.Lhs) == len(n.Rhs) {
					st.fieldVals[f] = append(st.fieldVals[f], n.Rhs[i])
				} else {
					st.fieldBad[f] = true
				}
			}
		}
	case *ast.UnaryExpr:
		if f := field(n.X); f != nil {
			st.fieldBad[f] = true
		}
	case *ast.CompositeLit:
		t := info.TypeOf(n)
		if t == nil {
			return
		}
		str, ok := t.Underlying().(*types.Struct)
		if !ok {
			return
		}
		for i, elt := range n.Elts {
			var f *types.Var
			val := elt
			if kv, ok := elt.(*ast.KeyValueExpr); ok {
				if k, ok := kv.Key.(*ast.Ident); ok {
					f, _ = info.Uses[k].(*types.Var)
				}
				val = kv.Value
			} else if i < str.NumFields() {
				f = str.Field(i)
			}
			if f != nil && !f.Exported() && tracksValues(f) {
				st.fieldVals[f] = append(st.fieldVals[f], val)
			}
		}
	}
}

// valuesOf returns the values stored in the variable or unexported field
// that e denotes, when every store is known.
func (st *state) valuesOf(e ast.Expr) ([]ast.Expr, bool) {
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		v, ok := st.info.Uses[x].(*types.Var)
		if !ok || st.assigned[v] != len(st.funcVals[v]) || len(st.funcVals[v]) == 0 {
			return nil, false
		}
		return st.funcVals[v], true
	case *ast.SelectorExpr:
		s := st.info.Selections[x]
		if s == nil || s.Kind() != types.FieldVal {
			return nil, false
		}
		f, _ := s.Obj().(*types.Var)
		if f == nil || f.Exported() || st.fieldBad[f] || len(st.fieldVals[f]) == 0 {
			return nil, false
		}
		return st.fieldVals[f], true
	}
	return nil, false
}

// concreteSend reports whether a call of the interface method fn goes to
// a raw send: its receiver (a local variable or an unexported field) only
// ever holds NATS values whose method of that name is a send.
func (st *state) concreteSend(call *ast.CallExpr, fn *types.Func) (sendInfo, bool) {
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil || !types.IsInterface(sig.Recv().Type()) {
		return sendInfo{}, false
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return sendInfo{}, false
	}
	vals, ok := st.valuesOf(sel.X)
	if !ok {
		return sendInfo{}, false
	}
	var si sendInfo
	for i, v := range vals {
		t := st.info.TypeOf(v)
		if t == nil || !isNATSCarrier(t) {
			return sendInfo{}, false
		}
		obj, _, _ := types.LookupFieldOrMethod(t, true, fn.Pkg(), fn.Name())
		m, ok := obj.(*types.Func)
		if !ok {
			return sendInfo{}, false
		}
		s, ok := st.knownSender(m)
		if !ok {
			return sendInfo{}, false
		}
		if i == 0 {
			si = s
		}
	}
	si.direct = false
	return si, true
}
