package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"
)

// Option values applied in turn to a struct with an adding field
// (optvalues.go), and what the values a call passes add.

// foldOf returns the parameter of fn whose option values fn applies, in
// order, each once, to the struct it returns (resolveCreateOptions: co :=
// createOptions{...}; for _, o := range opts { o.applyCreate(&co) };
// return co), so that the adding field f of the result holds what they
// add; ok is false for any other shape.
func (co *connOpts) foldOf(fn *types.Func, f *types.Var) (param int, ok bool) {
	fb := co.vals.byFunc[fn]
	if fb == nil {
		return 0, false
	}
	var v *types.Var
	var apply *ast.CallExpr
	param = -1
	fine := make(map[*ast.Ident]bool)
	ast.Inspect(fb.body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			param = -2 // a literal may reach the struct later
		case *ast.ReturnStmt:
			if len(n.Results) != 1 {
				param = -2
				break
			}
			w := localVar(co.info, n.Results[0])
			if w == nil || v != nil && w != v {
				param = -2
			}
			v = w
			if id, ok := ast.Unparen(n.Results[0]).(*ast.Ident); ok {
				fine[id] = true
			}
		case *ast.RangeStmt:
			// for _, o := range opts { o.apply(&co) }
			p, call := co.applyLoop(fb, n)
			if p < 0 || apply != nil {
				param = -2
				break
			}
			param, apply = p, call
			if u, ok := call.Args[0].(*ast.UnaryExpr); ok {
				if id, ok := ast.Unparen(u.X).(*ast.Ident); ok {
					fine[id] = true
				}
			}
		case *ast.SelectorExpr:
			if s := co.info.Selections[n]; s != nil && s.Kind() == types.FieldVal {
				if id, ok := ast.Unparen(n.X).(*ast.Ident); ok {
					fine[id] = true
				}
			}
		}
		return param != -2
	})
	if param < 0 || v == nil || localVar(co.info, ast.Unparen(apply.Args[0]).(*ast.UnaryExpr).X) != v {
		return 0, false
	}
	// v: one literal initializer, no other assignment as a whole; every
	// use is a field, the applied &v or a return.
	inits := 0
	for _, a := range indexOf(fb).byVar[v] {
		if a.whole {
			inits++
			if _, isLit := ast.Unparen(a.rhs).(*ast.CompositeLit); !isLit {
				return 0, false
			}
		}
	}
	used := true
	ast.Inspect(fb.body, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && co.info.Uses[id] == v && !fine[id] {
			used = false
		}
		return used
	})
	st := structOf(v.Type())
	return param, inits == 1 && used && st != nil && hasField(st, f)
}

// applyLoop returns the parameter a range statement of the body fb goes
// over and the one call its body is, o.m(&x) with o the range value, if
// it has that shape; else -1.
func (co *connOpts) applyLoop(fb *fnBody, r *ast.RangeStmt) (int, *ast.CallExpr) {
	if len(r.Body.List) != 1 || r.Value == nil || r.Tok != token.DEFINE {
		return -1, nil
	}
	if k, ok := r.Key.(*ast.Ident); r.Key != nil && (!ok || k.Name != "_") {
		return -1, nil
	}
	es, ok := r.Body.List[0].(*ast.ExprStmt)
	if !ok {
		return -1, nil
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return -1, nil
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok || localVar(co.info, sel.X) != localVar(co.info, r.Value) {
		return -1, nil
	}
	if u, ok := call.Args[0].(*ast.UnaryExpr); !ok || u.Op != token.AND {
		return -1, nil
	}
	pv := localVar(co.info, r.X)
	i := co.paramIndex(fb, pv)
	if i < 0 || len(indexOf(fb).byVar[pv]) > 0 {
		return -1, nil
	}
	return i, call
}

// foldSum judges the adding field f of the struct a call of a fold
// function returns (foldOf), in the body fb: what the option values the
// call passes add.
func (co *connOpts) foldSum(fb *fnBody, call *ast.CallExpr, f *types.Var) (optSum, bool) {
	fn := calleeFunc(co.info, call)
	if fn == nil || fn.Pkg() != co.pass.Pkg {
		return optSum{}, false
	}
	p, ok := co.foldOf(fn, f)
	if !ok || p >= len(call.Args) || call.Ellipsis.IsValid() {
		return optSum{}, false
	}
	return co.valuesSum(fb, call.Args[p], f), true
}

// valuesSum judges what the option values in e, a slice, add to the
// adding field f: a literal's elements in order, or an unchanged
// parameter of fb (the caller's values).
func (co *connOpts) valuesSum(fb *fnBody, e ast.Expr, f *types.Var) optSum {
	switch x := ast.Unparen(e).(type) {
	case *ast.CompositeLit:
		sum := fixedSum(bufDefault, 0)
		for _, el := range x.Elts {
			sum = sum.then(co.addsSum(fb, el, f))
		}
		return sum
	case *ast.Ident:
		v := localVar(co.info, x)
		if i := co.paramIndex(fb, v); i >= 0 && len(indexOf(fb).byVar[v]) == 0 && fb.self != nil {
			return optSum{Buf: bufDefault, Param: i, Field: f.Name(), Adds: true}
		}
	}
	return unknownSum("option values not followed")
}

// valuesArg judges what the option values a call passes in parameter p
// (variadic or a slice) add to the adding field named name.
func (co *connOpts) valuesArg(fb *fnBody, call *ast.CallExpr, sig *types.Signature, p int, name string) optSum {
	variadic := sig.Variadic() && p == sig.Params().Len()-1 && !call.Ellipsis.IsValid()
	if variadic && len(call.Args) <= p {
		return fixedSum(bufDefault, 0) // no option values: nothing added
	}
	f := co.addingField(name)
	if f == nil || p >= sig.Params().Len() {
		return unknownSum("option values of another package, not followed")
	}
	if variadic {
		sum := fixedSum(bufDefault, 0)
		for _, a := range call.Args[min(p, len(call.Args)):] {
			sum = sum.then(co.addsSum(fb, a, f))
		}
		return sum
	}
	if p >= len(call.Args) {
		return unknownSum("option values not followed")
	}
	return co.valuesSum(fb, call.Args[p], f)
}
