package analyzer

import (
	"fmt"
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
)

// sendIndex knows which calls send: the send APIs and the functions of
// other packages with a sendsFact (knownSender), the functions of this
// package found to send through them (senders, propagated along the call
// graph and exported as facts), and what each call of a function body
// sends through (sendOf: also function literals, function variables and
// interface methods whose receiver only holds NATS values, read from the
// value index). The scan fills it; every check that looks at sends reads
// it.
type sendIndex struct {
	pass  *analysis.Pass
	info  *types.Info
	vals  *valueIndex
	graph *callGraph

	senders   map[*types.Func]sendInfo // functions of this package known to send
	calls     []localCall              // calls of functions of this package, resolved after the fixpoint
	sendCalls []*ast.CallExpr          // calls that send (after propagate)
	litSends  map[*ast.FuncLit]*sendInfo
	impls     *implIndex // the implementations converted into interfaces (the scan)
}

// newSendIndex returns the empty send index of pass.
func newSendIndex(pass *analysis.Pass, vals *valueIndex, graph *callGraph) *sendIndex {
	return &sendIndex{
		pass:     pass,
		info:     pass.TypesInfo,
		vals:     vals,
		graph:    graph,
		senders:  make(map[*types.Func]sendInfo),
		litSends: make(map[*ast.FuncLit]*sendInfo),
	}
}

// addSend records a call of a known sender; caller, if not nil, is the
// function declaration whose body makes it (outside function literals),
// which then sends too.
func (sn *sendIndex) addSend(call *ast.CallExpr, caller *types.Func, si sendInfo) {
	sn.sendCalls = append(sn.sendCalls, call)
	if caller != nil && si.kind != kindKVGuarded {
		if old, done := sn.senders[caller]; !done || preferKind(si.kind, old.kind) {
			sn.senders[caller] = sendInfo{via: si.via, kind: si.kind}
		}
	}
}

// addLocal records a call of callee, a function of this package: a send
// if callee turns out to send (propagate).
func (sn *sendIndex) addLocal(call *ast.CallExpr, callee *types.Func) {
	sn.calls = append(sn.calls, localCall{call, callee})
}

// sendSite is a send call found in a function body.
type sendSite struct {
	call *ast.CallExpr
	info sendInfo
	name string // what the call calls, for messages
}

// subject names the send for a message: the API itself, or what the user
// called and the API it ends up in.
func (s sendSite) subject() string {
	if s.info.direct {
		return "call of " + s.name
	}
	return fmt.Sprintf("call of %s (via %s)", s.name, s.info.via)
}

// sendInfo describes what a call sends through.
type sendInfo struct {
	via    string   // the send API it ends up calling
	kind   sendKind // what that send does
	js     bool     // the call itself is a JetStream publish
	direct bool     // the call itself is a listed send API (raw or shim)
	// param: the call of a function parameter, in a function that may
	// retry it; an integer argument is the attempt number (op(attempt)),
	// not another item
	param bool
}

// knownSender reports whether fn is a send API (raw, shim or claimcheck)
// or a function of another package with a sendsFact, and what it sends
// through.
func knownSender(pass *analysis.Pass, fn *types.Func) (sendInfo, bool) {
	key := funcKey(fn)
	if rs, ok := rawSendOf(key); ok {
		return sendInfo{via: rs.display, kind: rs.kind, js: rs.kind == kindJetStream, direct: true}, true
	}
	if ss, ok := shimSendOf(key); ok {
		return sendInfo{via: ss.display, kind: ss.kind, js: ss.kind == kindJetStream, direct: true}, true
	}
	if fn.Pkg() != nil && fn.Pkg() != pass.Pkg && !isNATSPackage(fn.Pkg().Path()) {
		var fact sendsFact
		if pass.ImportObjectFact(fn.Origin(), &fact) {
			return sendInfo{via: fact.Via, kind: sendKind(fact.Kind)}, true
		}
	}
	return sendInfo{}, false
}

// sendVia reports whether fn is known to send, including functions of this
// package found to send.
func (sn *sendIndex) sendVia(fn *types.Func) (sendInfo, bool) {
	fn = fn.Origin()
	if si, ok := knownSender(sn.pass, fn); ok {
		return si, true
	}
	si, ok := sn.senders[fn]
	return si, ok
}

// preferKind reports whether a function sending both ways is better
// described by the send of kind k than by the one of kind old: a JetStream
// publish, whose repeat is stored for good and which a message ID
// de-duplicates, wins over a request or publish beside it (a stream
// lookup before the publish).
func preferKind(k, old sendKind) bool {
	return k == kindJetStream && old != kindJetStream
}

// propagate computes the functions of this package that send, through
// calls of other functions of this package, and exports their facts.
func (sn *sendIndex) propagate() {
	for changed := true; changed; {
		changed = false
		for _, caller := range sn.graph.callers {
			if si, ok := sn.senders[caller]; ok && si.kind == kindJetStream {
				continue
			}
			for _, callee := range sn.graph.edges[caller] {
				if si, ok := sn.senders[callee]; ok {
					if old, done := sn.senders[caller]; !done || preferKind(si.kind, old.kind) {
						sn.senders[caller] = si
						changed = true
					}
				}
			}
		}
	}
	// natssend's own shim and claimcheck packages export no facts: their
	// sends are listed (shimSendOf), and nothing else there counts as one.
	if !isKnownShim(sn.pass.Pkg.Path()) {
		for fn, si := range sn.senders {
			if fn.Pkg() == sn.pass.Pkg {
				sn.pass.ExportObjectFact(fn, &sendsFact{Via: si.via, Kind: uint8(si.kind)})
			}
		}
	}
	for _, lc := range sn.calls {
		if _, ok := sn.senders[lc.callee]; ok {
			sn.sendCalls = append(sn.sendCalls, lc.call)
		}
	}
}

// sendOf reports whether call sends, and through what: a known sender, a
// function of this package found to send, or a function literal that sends
// (bound once to a local variable, or called on the spot).
func (sn *sendIndex) sendOf(call *ast.CallExpr) (sendSite, bool) {
	if fn := calleeFunc(sn.info, call); fn != nil {
		si, ok := sn.sendVia(fn)
		if !ok {
			// A method of an interface whose value is known: p.Publish
			// with p (or s.p) only ever holding a *nats.Conn.
			if si, ok := sn.concreteSend(call, fn); ok {
				return sendSite{call, si, funcName(sn.pass.Pkg, fn)}, true
			}
			if si, ok := sn.implSend(call, fn); ok {
				return sendSite{call, si, funcName(sn.pass.Pkg, fn)}, true
			}
			return sendSite{}, false
		}
		name := si.via
		if !si.direct {
			name = funcName(sn.pass.Pkg, fn)
		}
		return sendSite{call, si, name}, true
	}
	if lit := sn.vals.closureOf(call.Fun); lit != nil {
		if si := sn.litInfo(lit); si != nil {
			name := sn.vals.litName(sn.pass.Pkg, sn.pass.Fset, lit)
			if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok {
				name = id.Name
			}
			return sendSite{call, sendInfo{via: si.via, kind: si.kind}, name}, true
		}
	}
	if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok {
		if v, ok := sn.info.Uses[id].(*types.Var); ok {
			if si, ok := sn.funcVarSends(v); ok {
				return sendSite{call, si, id.Name}, true
			}
		}
	}
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		if vals, ok := sn.vals.valuesOf(sel); ok {
			if si, ok := sn.valuesSend(vals); ok {
				return sendSite{call, si, sel.Sel.Name}, true
			}
		}
	}
	return sendSite{}, false
}

// funcVarSends reports whether every value assigned to the local function
// variable v sends: method values of sends (pub := nc.Publish), functions
// known to send, function literals that send (send = publishA; send =
// publishB). A single method value of a send API keeps its kind, so its
// arguments read as the API's.
func (sn *sendIndex) funcVarSends(v *types.Var) (sendInfo, bool) {
	vals, ok := sn.vals.funcValues(v)
	if !ok {
		return sendInfo{}, false
	}
	return sn.valuesSend(vals)
}

// valuesSend reports whether every function value in vals sends.
func (sn *sendIndex) valuesSend(vals []ast.Expr) (sendInfo, bool) {
	var first sendInfo
	for i, val := range vals {
		var si sendInfo
		switch x := ast.Unparen(val).(type) {
		case *ast.FuncLit:
			li := sn.litInfo(x)
			if li == nil {
				return sendInfo{}, false
			}
			si = sendInfo{via: li.via, kind: li.kind}
		case *ast.SelectorExpr, *ast.Ident:
			var fn *types.Func
			if sel, ok := x.(*ast.SelectorExpr); ok {
				fn = selectedFunc(sn.info, sel)
			} else {
				fn, _ = sn.info.Uses[x.(*ast.Ident)].(*types.Func)
			}
			if fn == nil {
				return sendInfo{}, false
			}
			var ok bool
			if si, ok = sn.sendVia(fn); !ok {
				return sendInfo{}, false
			}
		default:
			return sendInfo{}, false
		}
		if i == 0 {
			first = si
		} else {
			first.direct, first.js = false, false
		}
	}
	return first, true
}

// litInfo returns what a function literal sends through, or nil.
func (sn *sendIndex) litInfo(lit *ast.FuncLit) *sendInfo {
	if si, ok := sn.litSends[lit]; ok {
		return si
	}
	sn.litSends[lit] = nil // break cycles
	fb := sn.vals.bodies[lit.Body]
	if fb == nil {
		return nil
	}
	var si *sendInfo
	for _, call := range fb.calls {
		if s, ok := sn.sendOf(call); ok && s.info.kind != kindKVGuarded && (si == nil || preferKind(s.info.kind, si.kind)) {
			si = &sendInfo{via: s.info.via, kind: s.info.kind}
		}
	}
	sn.litSends[lit] = si
	return si
}

// concreteSend reports whether a call of the interface method fn sends:
// its receiver (a local variable or an unexported field) only ever holds
// values whose method of that name sends (a *nats.Conn's Publish, a
// method of this package found to send, one with a sendsFact).
func (sn *sendIndex) concreteSend(call *ast.CallExpr, fn *types.Func) (sendInfo, bool) {
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil || !types.IsInterface(sig.Recv().Type()) {
		return sendInfo{}, false
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return sendInfo{}, false
	}
	vals, ok := sn.vals.valuesOf(sel.X)
	if !ok {
		return sendInfo{}, false
	}
	ts := make([]types.Type, len(vals))
	for i, v := range vals {
		t := sn.info.TypeOf(v)
		if t == nil || types.IsInterface(t) {
			return sendInfo{}, false
		}
		ts[i] = t
	}
	si, ok := sn.methodsSend(ts, fn)
	si.direct = false
	return si, ok
}

// methodsSend reports whether the method named as fn of every type in ts
// sends, and how the first one does.
func (sn *sendIndex) methodsSend(ts []types.Type, fn *types.Func) (sendInfo, bool) {
	var si sendInfo
	for i, t := range ts {
		obj, _, _ := types.LookupFieldOrMethod(t, true, fn.Pkg(), fn.Name())
		m, ok := obj.(*types.Func)
		if !ok {
			return sendInfo{}, false
		}
		s, ok := sn.sendVia(m)
		if !ok {
			return sendInfo{}, false
		}
		if i == 0 {
			si = s
		}
	}
	return si, true
}

// funcName names fn as the user wrote it: Name or (*T).Name in this
// package, pkg.Name or (*pkg.T).Name in another.
func funcName(pkg *types.Package, fn *types.Func) string {
	qual := func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		return p.Name()
	}
	sig, _ := fn.Type().(*types.Signature)
	if sig != nil && sig.Recv() != nil {
		return "(" + types.TypeString(sig.Recv().Type(), qual) + ")." + fn.Name()
	}
	if fn.Pkg() == nil || fn.Pkg() == pkg {
		return fn.Name()
	}
	return fn.Pkg().Name() + "." + fn.Name()
}
