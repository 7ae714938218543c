package analyzer

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ast/astutil"
)

// fixedMsgID reports whether a JetStream publish carries a message ID that
// is the same on every attempt: set by jetstream.WithMsgID or nats.MsgId
// among its options, or as the Nats-Msg-Id header of its message, from an
// expression that does not change in region (the nodes that run again on a
// retry). lit is the retried function literal, if any: its parameters
// change between attempts.
func (st *state) fixedMsgID(call *ast.CallExpr, region []ast.Node, lit *ast.FuncLit) bool {
	inv := &invariance{st: st, region: region, lit: lit}
	for _, arg := range call.Args {
		arg = ast.Unparen(arg)
		if opt, ok := arg.(*ast.CallExpr); ok && len(opt.Args) == 1 {
			switch funcKey(calleeFunc(st.info, opt)) {
			case msgIDOptionFuncs[0], msgIDOptionFuncs[1]:
				if inv.fixed(opt.Args[0], 0) {
					return true
				}
			}
			continue
		}
		if t := st.info.TypeOf(arg); t != nil && isNamed(t, natsPath, "Msg") && st.msgHasFixedID(arg, inv) {
			return true
		}
	}
	return false
}

// msgHasFixedID reports whether the message expression m gets a fixed
// Nats-Msg-Id header: in a composite literal, or by Header.Set or
// Header.Add on a variable holding it anywhere in the function.
func (st *state) msgHasFixedID(m ast.Expr, inv *invariance) bool {
	if u, ok := m.(*ast.UnaryExpr); ok && u.Op == token.AND {
		m = ast.Unparen(u.X)
	}
	if lit, ok := m.(*ast.CompositeLit); ok {
		return st.literalHasFixedID(lit, inv)
	}
	id, ok := m.(*ast.Ident)
	if !ok {
		return false
	}
	v, ok := st.info.Uses[id].(*types.Var)
	if !ok {
		return false
	}
	body := st.bodyOf(v)
	if body == nil {
		return false
	}
	fixed := false
	ast.Inspect(body, func(n ast.Node) bool {
		if fixed {
			return false
		}
		switch n := n.(type) {
		case *ast.CallExpr:
			// v.Header.Set(key, id) or v.Header.Add(key, id)
			sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr)
			if !ok || len(n.Args) != 2 {
				return true
			}
			if k := funcKey(calleeFunc(st.info, n)); !headerSetters[k] {
				return true
			}
			hdr, ok := ast.Unparen(sel.X).(*ast.SelectorExpr)
			if !ok || hdr.Sel.Name != "Header" {
				return true
			}
			if root, ok := ast.Unparen(hdr.X).(*ast.Ident); ok && st.info.Uses[root] == v &&
				isMsgIDKey(st.info, n.Args[0]) && inv.fixed(n.Args[1], 0) {
				fixed = true
			}
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				lid, ok := l.(*ast.Ident)
				if !ok || st.info.ObjectOf(lid) != v || len(n.Rhs) != len(n.Lhs) {
					continue
				}
				rhs := ast.Unparen(n.Rhs[i])
				if u, ok := rhs.(*ast.UnaryExpr); ok && u.Op == token.AND {
					rhs = ast.Unparen(u.X)
				}
				if lit, ok := rhs.(*ast.CompositeLit); ok && st.literalHasFixedID(lit, inv) {
					fixed = true
				}
			}
		}
		return true
	})
	return fixed
}

// bodyOf returns the body of the function that declares the local variable v.
func (st *state) bodyOf(v *types.Var) *ast.BlockStmt {
	var best *ast.BlockStmt
	for body := range st.bodies {
		if body.Pos() <= v.Pos() && v.Pos() < body.End() && (best == nil || body.Pos() > best.Pos()) {
			best = body
		}
	}
	if best != nil {
		return best
	}
	// v may be a parameter: find the function whose type contains it.
	for _, fb := range st.bodies {
		var typ *ast.FuncType
		if fb.lit != nil {
			typ = fb.lit.Type
		} else if fb.self != nil {
			if path, _ := astutil.PathEnclosingInterval(st.files[st.pass.Fset.File(fb.body.Pos())], fb.body.Pos(), fb.body.Pos()); len(path) > 0 {
				for _, n := range path {
					if fd, ok := n.(*ast.FuncDecl); ok {
						typ = fd.Type
						break
					}
				}
			}
		}
		if typ != nil && typ.Pos() <= v.Pos() && v.Pos() < typ.End() {
			return fb.body
		}
	}
	return nil
}

// literalHasFixedID reports whether a nats.Msg literal has a Header literal
// with a fixed Nats-Msg-Id.
func (st *state) literalHasFixedID(lit *ast.CompositeLit, inv *invariance) bool {
	for _, elt := range lit.Elts {
		kv, ok := elt.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		if key, ok := kv.Key.(*ast.Ident); !ok || key.Name != "Header" {
			continue
		}
		hl, ok := ast.Unparen(kv.Value).(*ast.CompositeLit)
		if !ok {
			continue
		}
		for _, he := range hl.Elts {
			hkv, ok := he.(*ast.KeyValueExpr)
			if !ok || !isMsgIDKey(st.info, hkv.Key) {
				continue
			}
			vals, ok := ast.Unparen(hkv.Value).(*ast.CompositeLit)
			if !ok || len(vals.Elts) == 0 {
				continue
			}
			if inv.fixed(vals.Elts[0], 0) {
				return true
			}
		}
	}
	return false
}

func isMsgIDKey(info *types.Info, e ast.Expr) bool {
	tv := info.Types[e]
	return tv.Value != nil && tv.Value.Kind() == constant.String && constant.StringVal(tv.Value) == msgIDHeader
}

// invariance decides whether an expression has the same value on every
// run of a region of code.
type invariance struct {
	st     *state
	region []ast.Node
	lit    *ast.FuncLit
}

// fixed reports whether e has the same value each time the region runs:
// constants, package-level variables, variables not assigned in the region
// (or assigned once there from a fixed expression), and pure functions of
// those.
func (inv *invariance) fixed(e ast.Expr, depth int) bool {
	if depth > 8 {
		return false
	}
	info := inv.st.info
	if tv, ok := info.Types[e]; ok && tv.Value != nil {
		return true
	}
	switch x := e.(type) {
	case *ast.ParenExpr:
		return inv.fixed(x.X, depth+1)
	case *ast.BinaryExpr:
		return inv.fixed(x.X, depth+1) && inv.fixed(x.Y, depth+1)
	case *ast.UnaryExpr:
		return x.Op != token.ARROW && x.Op != token.AND && inv.fixed(x.X, depth+1)
	case *ast.SelectorExpr:
		if _, ok := info.Uses[x.Sel].(*types.Var); ok && info.Selections[x] == nil {
			return true // a package-level variable of another package
		}
		return info.Selections[x] != nil && info.Selections[x].Kind() == types.FieldVal && inv.fixed(x.X, depth+1)
	case *ast.IndexExpr:
		return inv.fixed(x.X, depth+1) && inv.fixed(x.Index, depth+1)
	case *ast.CallExpr:
		if tv, ok := info.Types[x.Fun]; ok && tv.IsType() && len(x.Args) == 1 {
			return inv.fixed(x.Args[0], depth+1) // a conversion
		}
		if !pureFunc(funcKey(calleeFunc(inv.st.info, x))) {
			return false
		}
		for _, a := range x.Args {
			if !inv.fixed(a, depth+1) {
				return false
			}
		}
		return true
	case *ast.Ident:
		v, ok := info.Uses[x].(*types.Var)
		if !ok {
			return false
		}
		if v.Pkg() != nil && v.Parent() == v.Pkg().Scope() {
			return true
		}
		if inv.lit != nil && inv.lit.Type.Pos() <= v.Pos() && v.Pos() < inv.lit.Type.End() {
			return false // a parameter of the retried literal
		}
		rhs, n := inv.assignments(v)
		switch n {
		case 0:
			return true
		case 1:
			return rhs != nil && inv.fixed(rhs, depth+1)
		}
	}
	return false
}

// assignments counts the assignments to v in the region, returning the
// right-hand side when there is exactly one simple one.
func (inv *invariance) assignments(v *types.Var) (ast.Expr, int) {
	info := inv.st.info
	var rhs ast.Expr
	n := 0
	for _, node := range inv.region {
		ast.Inspect(node, func(x ast.Node) bool {
			switch x := x.(type) {
			case *ast.AssignStmt:
				for i, l := range x.Lhs {
					if id, ok := ast.Unparen(l).(*ast.Ident); ok && info.ObjectOf(id) == v {
						n++
						rhs = nil
						if len(x.Rhs) == len(x.Lhs) && (x.Tok == token.DEFINE || x.Tok == token.ASSIGN) {
							rhs = x.Rhs[i]
						}
					}
				}
			case *ast.IncDecStmt:
				if id, ok := ast.Unparen(x.X).(*ast.Ident); ok && info.Uses[id] == v {
					n++
				}
			case *ast.UnaryExpr:
				if id, ok := ast.Unparen(x.X).(*ast.Ident); ok && x.Op == token.AND && info.Uses[id] == v {
					n += 2 // its address escapes: never fixed
				}
			case *ast.ValueSpec:
				for i, name := range x.Names {
					if info.Defs[name] == v {
						n++
						rhs = nil
						if len(x.Values) == len(x.Names) {
							rhs = x.Values[i]
						}
					}
				}
			}
			return true
		})
	}
	return rhs, n
}

// pureFunc reports whether the function with the given funcKey returns a
// result that depends only on its arguments.
func pureFunc(key string) bool { return pureFuncs[key] }
