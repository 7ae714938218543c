package analyzer

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// Blind spots made visible: a NATS value (a *nats.Conn, a JetStream
// context, a micro.Request) that flows into an interface type of the
// user's own whose methods it implements with raw sends is reported where
// it flows in: assigned, passed, returned, stored in a composite literal or
// sent on a channel, converted, or used as the type argument of a generic
// function whose constraint has such a method. Calls through the interface
// are invisible; the conversion is where the raw send is chosen.

// flowCheck reports NATS values flowing into interfaces of the user's
// own that they implement with raw sends (see above). The scan calls at
// for each node; it reports through the reporter and keeps nothing.
type flowCheck struct {
	info *types.Info
	pkg  *types.Package
	rep  *reporter
	// impls, if set, records every concrete type converted into an
	// interface (implSend).
	impls *implIndex
}

// at checks the node n of the scan for NATS values flowing into
// interfaces; stack holds its ancestors.
func (fc *flowCheck) at(n ast.Node, stack []ast.Node) {
	info := fc.info
	switch n := n.(type) {
	case *ast.AssignStmt:
		if n.Tok == token.ASSIGN && len(n.Lhs) == len(n.Rhs) {
			for i, l := range n.Lhs {
				fc.into(n.Rhs[i], info.TypeOf(l))
			}
		}
	case *ast.ValueSpec:
		if n.Type != nil && len(n.Values) == len(n.Names) {
			for _, v := range n.Values {
				fc.into(v, info.TypeOf(n.Type))
			}
		}
	case *ast.CallExpr:
		if tv, ok := info.Types[n.Fun]; ok && tv.IsType() {
			if len(n.Args) == 1 {
				fc.into(n.Args[0], tv.Type)
			}
			return
		}
		sig, _ := info.TypeOf(n.Fun).(*types.Signature)
		if sig == nil {
			return
		}
		for i, a := range n.Args {
			if n.Ellipsis.IsValid() && i == len(n.Args)-1 {
				break
			}
			fc.into(a, paramType(sig, i))
		}
	case *ast.ReturnStmt:
		sig := enclosingSig(info, stack)
		if sig != nil && sig.Results().Len() == len(n.Results) {
			for i, r := range n.Results {
				fc.into(r, sig.Results().At(i).Type())
			}
		}
	case *ast.CompositeLit:
		t := info.TypeOf(n)
		if t == nil {
			return
		}
		switch u := t.Underlying().(type) {
		case *types.Struct:
			for i, elt := range n.Elts {
				if kv, ok := elt.(*ast.KeyValueExpr); ok {
					if k, ok := kv.Key.(*ast.Ident); ok {
						if f, ok := info.Uses[k].(*types.Var); ok {
							fc.into(kv.Value, f.Type())
						}
					}
				} else if i < u.NumFields() {
					fc.into(elt, u.Field(i).Type())
				}
			}
		case *types.Slice, *types.Array, *types.Map:
			var elem types.Type
			switch u := u.(type) {
			case *types.Slice:
				elem = u.Elem()
			case *types.Array:
				elem = u.Elem()
			case *types.Map:
				elem = u.Elem()
			}
			for _, elt := range n.Elts {
				if kv, ok := elt.(*ast.KeyValueExpr); ok {
					elt = kv.Value
				}
				fc.into(elt, elem)
			}
		}
	case *ast.SendStmt:
		if ch, ok := info.TypeOf(n.Chan).Underlying().(*types.Chan); ok {
			fc.into(n.Value, ch.Elem())
		}
	case *ast.Ident:
		if len(info.Instances) > 0 {
			fc.instance(n)
		}
	}
}

// enclosingSig returns the signature of the function enclosing the top of
// stack.
func enclosingSig(info *types.Info, stack []ast.Node) *types.Signature {
	for i := len(stack) - 1; i >= 0; i-- {
		switch f := stack[i].(type) {
		case *ast.FuncLit:
			sig, _ := info.TypeOf(f).(*types.Signature)
			return sig
		case *ast.FuncDecl:
			if fn, ok := info.Defs[f.Name].(*types.Func); ok {
				return fn.Type().(*types.Signature)
			}
			return nil
		}
	}
	return nil
}

// isNATSCarrier reports whether t is a NATS value whose methods include
// raw sends.
func isNATSCarrier(t types.Type) bool {
	t = types.Unalias(t)
	if p, ok := t.(*types.Pointer); ok {
		t = types.Unalias(p.Elem())
	}
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() == nil || !isNATSPackage(n.Obj().Pkg().Path()) {
		return false // the common case, decided cheaply
	}
	for _, c := range sendingTypes {
		if isNamed(t, c[0], c[1]) {
			return true
		}
	}
	return false
}

// rawMethods returns the first method of the interface dst that src
// implements with a raw send, and that send, if dst is an interface of the
// user's own (not declared in nats.go).
func rawMethods(src, dst types.Type) (string, rawSend, bool) {
	if named, ok := types.Unalias(dst).(*types.Named); ok && (named.Obj().Pkg() == nil || isNATSPackage(named.Obj().Pkg().Path())) {
		return "", rawSend{}, false
	}
	if types.Identical(src, dst) {
		return "", rawSend{}, false
	}
	iface, ok := dst.Underlying().(*types.Interface)
	if !ok {
		return "", rawSend{}, false
	}
	for i := 0; i < iface.NumMethods(); i++ {
		m := iface.Method(i)
		obj, _, _ := types.LookupFieldOrMethod(src, true, m.Pkg(), m.Name())
		if fn, ok := obj.(*types.Func); ok {
			if rs, ok := rawSendOf(funcKey(fn)); ok {
				return m.Name(), rs, true
			}
		}
	}
	return "", rawSend{}, false
}

// into reports src when it is a NATS value and dst an interface of the
// user's own that it implements with a raw send.
func (fc *flowCheck) into(src ast.Expr, dst types.Type) {
	srcT := fc.info.TypeOf(src)
	if srcT != nil && dst != nil && fc.impls != nil {
		fc.impls.record(src, srcT, dst)
	}
	if srcT == nil || dst == nil || !isNATSCarrier(srcT) {
		return
	}
	method, rs, ok := rawMethods(srcT, dst)
	if !ok {
		return
	}
	fc.addFlow(src, fmt.Sprintf("%s flows into %s, whose %s", typeName(fc.pkg, srcT), typeName(fc.pkg, dst), method), method, rs)
}

// instance reports a generic function instantiated with a NATS value
// for a type parameter whose constraint has a method it implements with a
// raw send.
func (fc *flowCheck) instance(id *ast.Ident) {
	inst, ok := fc.info.Instances[id]
	if !ok {
		return
	}
	fn, ok := fc.info.Uses[id].(*types.Func)
	if !ok {
		return
	}
	tparams := fn.Type().(*types.Signature).TypeParams()
	for i := 0; i < inst.TypeArgs.Len() && i < tparams.Len(); i++ {
		targ := inst.TypeArgs.At(i)
		if !isNATSCarrier(targ) {
			continue
		}
		tp := tparams.At(i)
		iface, _ := tp.Constraint().Underlying().(*types.Interface)
		if iface == nil {
			continue
		}
		for j := 0; j < iface.NumMethods(); j++ {
			m := iface.Method(j)
			obj, _, _ := types.LookupFieldOrMethod(targ, true, m.Pkg(), m.Name())
			if f, ok := obj.(*types.Func); ok {
				if rs, ok := rawSendOf(funcKey(f)); ok {
					fc.addFlow(id, fmt.Sprintf("%s instantiates %s's %s, whose %s", typeName(fc.pkg, targ), fn.Name(), tp.Obj().Name(), m.Name()), m.Name(), rs)
					return
				}
			}
		}
	}
}

// addFlow records a rawsend finding for a NATS value flowing where its
// calls are not checked: "<what flows where>, whose M is raw API, not
// checked where it is called: wrap it in a type whose M calls <the shim
// replacement>".
func (fc *flowCheck) addFlow(at ast.Expr, what, method string, rs rawSend) {
	fc.rep.add(&finding{
		category: CategoryRawSend,
		pos:      at.Pos(),
		end:      at.End(),
		api:      "raw " + rs.display,
		message:  fmt.Sprintf("%s is raw %s, not checked where it is called: wrap it in a type whose %s calls %s", what, rs.display, method, replacementOf(rs.advice)),
		report:   fc.rep.reported(CategoryRawSend),
	})
}

// replacementOf returns what a raw send's advice says to use instead
// ("shim.Publish" in "...: use shim.Publish").
func replacementOf(advice string) string {
	if i := strings.LastIndex(advice, "use "); i >= 0 {
		return advice[i+len("use "):]
	}
	return advice
}

// typeName names t for messages, qualified by package name outside this
// package.
func typeName(pkg *types.Package, t types.Type) string {
	if _, ok := types.Unalias(t).(*types.Interface); ok {
		return "an interface"
	}
	return types.TypeString(t, func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		return p.Name()
	})
}
