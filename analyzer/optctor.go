package analyzer

import (
	"go/ast"
	"go/types"
)

// Options a constructor keeps in a field from its parameter (return
// &Client{opts: opts}; nack's newNatsConnPool(..., natsOpts)): a connect
// with that field, plus options of its own that leave the buffer alone,
// is judged at each call of the constructor.

// ctorField reports whether every store to the field f is the parameter
// (param) of one function fn, as is, a constructor keeping its caller's
// options (return &Client{opts: opts}): the field then holds what the
// callers of fn pass, and a connect with it is judged at those calls.
func (co *connOpts) ctorField(f *types.Var) (fn *types.Func, param int, ok bool) {
	if _, bad := co.fieldBad[f]; bad || f.Pkg() != co.pass.Pkg {
		return nil, 0, false
	}
	stores := co.fieldStores[f]
	for _, st := range stores {
		if st.fb == nil || st.fb.self == nil || fn != nil && st.fb.self != fn {
			return nil, 0, false
		}
		v := localVar(co.info, st.rhs)
		i := co.paramIndex(st.fb, v)
		if i < 0 || len(indexOf(st.fb).byVar[v]) > 0 || fn != nil && i != param {
			return nil, 0, false
		}
		fn, param = st.fb.self, i
	}
	return fn, param, fn != nil
}

// ctorParam returns the parameter of fn that a constructor field holds
// which a connect of the package passes as its only options (see
// ctorConnect), if there is one.
func (co *connOpts) ctorParam(fn *types.Func) (int, bool) {
	for f := range co.ctorUsed {
		if g, i, ok := co.ctorField(f); ok && g == fn {
			return i, true
		}
	}
	return 0, false
}

// ctorConnect reports whether the connect s takes its options from one
// field its constructor stores from a parameter (ctorField), with only
// options around it that leave the buffer alone (nats.Connect(c.url,
// c.opts...); opts := cp.natsOpts, then appended credentials and a
// function literal setting the name): the calls of the constructor are
// then the connects (connectsOf), and this one is not judged on its own.
// The options are judged with the field standing for "no setting"
// (ctorMode); any setting of the buffer around it, or a second such
// field, and the connect is judged as usual.
func (co *connOpts) ctorConnect(s connectSite) bool {
	if f, ok := co.ctorSites[s.call]; ok {
		return f != nil
	}
	restore := co.mode(true)
	sum := co.directSum(s)
	hits := co.ctorHits
	restore()
	var f *types.Var
	if len(hits) == 1 && sum == fixedSum(bufDefault, 0) {
		for h := range hits {
			f = h
		}
	}
	if co.ctorSites == nil {
		co.ctorSites = make(map[*ast.CallExpr]*types.Var)
		co.ctorUsed = make(map[*types.Var]bool)
	}
	co.ctorSites[s.call] = f
	if f != nil {
		co.ctorUsed[f] = true
	}
	return f != nil
}

// mode sets whether constructor fields stand for "no setting" (ctor,
// within ctorConnect) or are judged as fields, with no field seen yet,
// and returns the function that restores the mode before. Summaries that
// are kept (of functions, fields and connecting functions) are made in
// the plain mode.
func (co *connOpts) mode(ctor bool) (restore func()) {
	m, h := co.ctorMode, co.ctorHits
	co.ctorMode, co.ctorHits = ctor, nil
	return func() { co.ctorMode, co.ctorHits = m, h }
}

// ctorHit reports whether, in ctorMode, the field f read by x is a
// constructor's field (not one other packages may set), and notes it.
func (co *connOpts) ctorHit(f *types.Var, x *ast.SelectorExpr) bool {
	if !co.ctorMode || f.Exported() && exportedOwner(co.info.TypeOf(x.X)) {
		return false
	}
	if _, _, ok := co.ctorField(f); !ok {
		return false
	}
	if co.ctorHits == nil {
		co.ctorHits = make(map[*types.Var]bool)
	}
	co.ctorHits[f] = true
	return true
}

// ctorOf returns the exported constructor whose calls the connect call
// was delegated to, with the parameter and the field, if it was.
func (co *connOpts) ctorOf(call *ast.CallExpr) (fn *types.Func, param string, f *types.Var) {
	f = co.ctorSites[call]
	if f == nil {
		return nil, "", nil
	}
	fn, i, ok := co.ctorField(f)
	if !ok || !fn.Exported() {
		return nil, "", nil
	}
	sig, _ := fn.Type().(*types.Signature)
	return fn, sig.Params().At(i).Name(), f
}
