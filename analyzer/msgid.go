package analyzer

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
)

// idCheck decides whether a retried send carries an ID that makes the
// retry safe: a JetStream message ID (WithMsgID, nats.MsgId, the
// Nats-Msg-Id header) or a shim operation ID that is the same on every
// attempt. It follows options slices, messages and headers to their
// stores in the value index; the retry check asks it (fixedID) before
// reporting a send.
type idCheck struct {
	info *types.Info
	pkg  *types.Package
	vals *valueIndex
}

// fixedMsgID reports whether a JetStream publish carries a message ID that
// is the same on every attempt, from an expression that does not change in
// region (the nodes that run again on a retry): jetstream.WithMsgID or
// nats.MsgId among its options, also in an options slice passed with
// opts..., or the Nats-Msg-Id header of its message, set in a literal, by
// Header.Set or Header.Add, by indexing, or in a header map built first
// and assigned. The region is in the body fb; lit is the retried function
// literal, if any: its parameters change between attempts.
func (ic *idCheck) fixedMsgID(call *ast.CallExpr, fb *fnBody, region []ast.Node, lit *ast.FuncLit) bool {
	inv := &invariance{info: ic.info, idx: indexOf(fb), region: region, lit: lit}
	for i, arg := range call.Args {
		arg = ast.Unparen(arg)
		if optionHasFixedID(ic.info, arg, inv) || ic.optionVarFixed(arg, inv, isMsgIDOption) {
			return true
		}
		if i == len(call.Args)-1 && call.Ellipsis.IsValid() && ic.optsHaveFixedID(arg, inv) {
			return true
		}
		if t := ic.info.TypeOf(arg); t != nil && isNamed(t, natsPath, msgType) && ic.msgHasFixedID(arg, inv) {
			return true
		}
	}
	return false
}

// fixedOperationID reports whether a shim request carries an operation ID
// (shim.OperationID among its call options, also in an options slice
// passed with opts...) that is the same on every attempt, by the rules of
// fixedMsgID. Only (*shim.Client).Request and RequestMsg count: a
// Nats-Msg-Id header on a request protects nothing.
func (ic *idCheck) fixedOperationID(call *ast.CallExpr, fb *fnBody, region []ast.Node, lit *ast.FuncLit) bool {
	if !opIDRequests[funcKey(calleeFunc(ic.info, call))] {
		return false
	}
	inv := &invariance{info: ic.info, idx: indexOf(fb), region: region, lit: lit}
	for i, arg := range call.Args {
		arg = ast.Unparen(arg)
		if optionHasFixed(ic.info, arg, inv, isOperationIDOption) || ic.optionVarFixed(arg, inv, isOperationIDOption) {
			return true
		}
		if i == len(call.Args)-1 && call.Ellipsis.IsValid() && ic.optsHaveFixed(arg, inv, isOperationIDOption) {
			return true
		}
	}
	return false
}

// optionVarFixed reports whether e is a local variable defined once from
// an ID option (isID) and not assigned again where the send repeats: id :=
// nats.MsgId(nuid.Next()) before the loop is the same ID on every attempt.
func (ic *idCheck) optionVarFixed(e ast.Expr, inv *invariance, isID func(*types.Info, ast.Expr) bool) bool {
	v := localVar(ic.info, e)
	if v == nil {
		return false
	}
	def := ic.vals.def(v)
	return def != nil && isID(ic.info, def) && inv.fixed(ast.Unparen(e), 0)
}

// isOperationIDOption reports whether e is a call of shim.OperationID.
func isOperationIDOption(info *types.Info, e ast.Expr) bool {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	return ok && funcKey(calleeFunc(info, call)) == opIDOptionFunc
}

// fixedID reports whether a send carries an ID that makes its retry safe:
// a fixed JetStream message ID, or a fixed operation ID on a shim request.
// region is in the body fb.
func (ic *idCheck) fixedID(s sendSite, fb *fnBody, region []ast.Node, lit *ast.FuncLit) bool {
	if s.info.direct && s.info.kind == kindKVGuarded {
		return true // KeyValue Create or Update: the bucket refuses a repeat
	}
	return s.info.js && ic.fixedMsgID(s.call, fb, region, lit) || ic.fixedOperationID(s.call, fb, region, lit)
}

// optionHasFixedID reports whether e is a message ID option with a fixed ID.
func optionHasFixedID(info *types.Info, e ast.Expr, inv *invariance) bool {
	return optionHasFixed(info, e, inv, isMsgIDOption)
}

// optionHasFixed reports whether e is an ID option (isID) with a fixed ID.
func optionHasFixed(info *types.Info, e ast.Expr, inv *invariance, isID func(*types.Info, ast.Expr) bool) bool {
	opt, ok := ast.Unparen(e).(*ast.CallExpr)
	return ok && len(opt.Args) == 1 && isID(info, opt) && inv.fixed(opt.Args[0], 0)
}

// optsHaveFixedID reports whether the options slice variable e holds a
// message ID option with a fixed ID: in its literal or appended to it.
func (ic *idCheck) optsHaveFixedID(e ast.Expr, inv *invariance) bool {
	return ic.optsHaveFixed(e, inv, isMsgIDOption)
}

// optsHaveFixed is optsHaveFixedID for the ID options isID matches.
func (ic *idCheck) optsHaveFixed(e ast.Expr, inv *invariance, isID func(*types.Info, ast.Expr) bool) bool {
	v := localVar(ic.info, e)
	body := ic.vals.bodyOf(v)
	if v == nil || body == nil {
		return false
	}
	found := false
	check := func(elts []ast.Expr) {
		for _, x := range elts {
			found = found || optionHasFixed(ic.info, x, inv, isID)
		}
	}
	ic.vals.valuesAssigned(body, v, func(rhs ast.Expr) {
		switch r := ast.Unparen(rhs).(type) {
		case *ast.CompositeLit:
			check(r.Elts)
		case *ast.CallExpr:
			if id, ok := ast.Unparen(r.Fun).(*ast.Ident); ok && id.Name == "append" && len(r.Args) > 1 {
				check(r.Args[1:])
			}
		}
	})
	return found
}

// msgHasFixedID reports whether the message expression m gets a fixed
// Nats-Msg-Id header: in its literal, or, for a variable, anywhere in the
// function that declares it.
func (ic *idCheck) msgHasFixedID(m ast.Expr, inv *invariance) bool {
	m = unaddr(m)
	if lit, ok := m.(*ast.CompositeLit); ok {
		return ic.literalHasFixedID(lit, inv)
	}
	v := localVar(ic.info, m)
	body := ic.vals.bodyOf(v)
	if v == nil || body == nil {
		return false
	}
	fixed := false
	ic.vals.valuesAssigned(body, v, func(rhs ast.Expr) {
		switch r := unaddr(rhs).(type) {
		case *ast.CompositeLit:
			fixed = fixed || ic.literalHasFixedID(r, inv)
		case *ast.CallExpr:
			// msg := e.toMsg(subj), built once before the retry by a
			// function of the package that sets the ID on the message.
			fixed = fixed || ic.builderSetsMsgID(r) && inv.fixed(m, 0)
		}
	})
	// v.Header: set, indexed or assigned.
	isHeader := func(e ast.Expr) bool {
		sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
		return ok && sel.Sel.Name == headerField && localVar(ic.info, sel.X) == v
	}
	fb := ic.vals.bodies[body]
	if fixed || headerSetIn(ic.info, fb, isHeader, inv) {
		return true
	}
	// v.Header = hdr, from the body's assignment index.
	for _, a := range indexOf(fb).byVar[v] {
		if _, ok := a.node.(*ast.AssignStmt); ok && a.rhs != nil && isHeader(a.lhs) && ic.headerHasFixedID(a.rhs, inv) {
			return true
		}
	}
	return false
}

// builderSetsMsgID reports whether call calls a function of the package
// that sets a Nats-Msg-Id header (not a fresh one: a nuid or the clock)
// on a message it builds: Header.Set, Header.Add or indexing on a local
// variable's Header, or a Header literal with the ID.
func (ic *idCheck) builderSetsMsgID(call *ast.CallExpr) bool {
	fn := calleeFunc(ic.info, call)
	if fn == nil || fn.Pkg() != ic.pkg {
		return false
	}
	fb := ic.vals.declBody(fn.Origin())
	if fb == nil {
		return false
	}
	inv := &invariance{info: ic.info}
	isHeader := func(e ast.Expr) bool {
		sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
		return ok && sel.Sel.Name == headerField && localVar(ic.info, sel.X) != nil
	}
	if headerSetIn(ic.info, fb, isHeader, inv) {
		return true
	}
	found := false
	ast.Inspect(fb.body, func(n ast.Node) bool {
		if lit, ok := n.(*ast.CompositeLit); ok && !found {
			found = ic.literalHasFixedID(lit, inv)
		}
		return !found
	})
	return found
}

// literalHasFixedID reports whether a nats.Msg literal has a Header with a
// fixed Nats-Msg-Id.
func (ic *idCheck) literalHasFixedID(lit *ast.CompositeLit, inv *invariance) bool {
	for _, elt := range lit.Elts {
		if kv, ok := elt.(*ast.KeyValueExpr); ok {
			if key, ok := kv.Key.(*ast.Ident); ok && key.Name == headerField && ic.headerHasFixedID(kv.Value, inv) {
				return true
			}
		}
	}
	return false
}

// headerHasFixedID reports whether the header expression h (a nats.Header
// literal, or a variable holding a header map) has a fixed Nats-Msg-Id.
func (ic *idCheck) headerHasFixedID(h ast.Expr, inv *invariance) bool {
	h = ast.Unparen(h)
	if hl, ok := h.(*ast.CompositeLit); ok {
		for _, he := range hl.Elts {
			hkv, ok := he.(*ast.KeyValueExpr)
			if !ok || !isMsgIDKey(ic.info, hkv.Key) {
				continue
			}
			if vals, ok := ast.Unparen(hkv.Value).(*ast.CompositeLit); ok && len(vals.Elts) > 0 && inv.fixed(vals.Elts[0], 0) {
				return true
			}
		}
		return false
	}
	v := localVar(ic.info, h)
	body := ic.vals.bodyOf(v)
	if v == nil || body == nil {
		return false
	}
	fixed := false
	ic.vals.valuesAssigned(body, v, func(rhs ast.Expr) {
		if hl, ok := ast.Unparen(rhs).(*ast.CompositeLit); ok {
			fixed = fixed || ic.headerHasFixedID(hl, inv)
		}
	})
	return fixed || headerSetIn(ic.info, ic.vals.bodies[body], func(e ast.Expr) bool { return localVar(ic.info, e) == v }, inv)
}

// headerSetIn reports whether the body fb sets a fixed Nats-Msg-Id on a
// header that isHeader recognizes: hdr.Set(key, id), hdr.Add(key, id) or,
// among the body's stores, hdr[key] = []string{id}.
func headerSetIn(info *types.Info, fb *fnBody, isHeader func(ast.Expr) bool, inv *invariance) bool {
	fixed := false
	ast.Inspect(fb.body, func(n ast.Node) bool {
		if n, ok := n.(*ast.CallExpr); ok {
			sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr)
			if ok && len(n.Args) == 2 && headerSetters[funcKey(calleeFunc(info, n))] && isHeader(sel.X) &&
				isMsgIDKey(info, n.Args[0]) && inv.fixed(n.Args[1], 0) {
				fixed = true
			}
		}
		return !fixed
	})
	if fixed {
		return true
	}
	for _, a := range indexOf(fb).all {
		if _, ok := a.node.(*ast.AssignStmt); !ok || a.rhs == nil {
			continue
		}
		ix, ok := ast.Unparen(a.lhs).(*ast.IndexExpr)
		if !ok || !isHeader(ix.X) || !isMsgIDKey(info, ix.Index) {
			continue
		}
		if vals, ok := ast.Unparen(a.rhs).(*ast.CompositeLit); ok && len(vals.Elts) > 0 && inv.fixed(vals.Elts[0], 0) {
			return true
		}
	}
	return false
}

// unaddr returns x for &x.
func unaddr(e ast.Expr) ast.Expr {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		return ast.Unparen(u.X)
	}
	return e
}

func isMsgIDKey(info *types.Info, e ast.Expr) bool {
	tv := info.Types[e]
	return tv.Value != nil && tv.Value.Kind() == constant.String && constant.StringVal(tv.Value) == msgIDHeader
}
