package analyzer

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
)

// shimHandlers are the shim's handler constructors that need the
// connection they are subscribed on (shim.Conn), with what they do
// without it.
var shimHandlers = map[string]string{
	shimPath + ".Handler":       "its replies cannot use the connection's limit (a refusal says Limit 0, a reply ready during a reconnect is dropped)",
	shimPath + ".JSONHandler":   "its replies cannot use the connection's limit (a refusal says Limit 0, a reply ready during a reconnect is dropped)",
	shimPath + ".StreamHandler": "it answers every request with an INTERNAL error (handler misconfigured)",
}

// shimConnOption is the option that gives a shim handler its connection.
const shimConnOption = shimPath + ".Conn"

// checkHandlerConns reports the shim handlers built without shim.Conn:
// every option passed is a call of a shim function and none is Conn. A
// handler whose options come in a slice or a variable is not judged. The
// suggested fix adds shim.Conn(nc) when the handler is passed straight to
// nc.Subscribe or nc.QueueSubscribe.
func (st *state) checkHandlerConns() {
	if !st.set.enabled[CategoryHandler] || st.rep.exempt || !importsPath(st.pass.Pkg, shimPath) {
		return
	}
	for _, f := range st.pass.Files {
		ast.PreorderStack(f, nil, func(n ast.Node, stack []ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			fn := calleeFunc(st.info, call)
			why, ok := shimHandlers[funcKey(fn)]
			if !ok || len(call.Args) == 0 || call.Ellipsis.IsValid() {
				return true
			}
			for _, opt := range call.Args[1:] {
				oc, ok := ast.Unparen(opt).(*ast.CallExpr)
				if !ok {
					return true // an option in a variable: not judged
				}
				of := calleeFunc(st.info, oc)
				if of == nil || of.Pkg() == nil || of.Pkg().Path() != shimPath || funcKey(of) == shimConnOption {
					return true
				}
			}
			name := "shim." + fn.Name()
			f := &finding{
				category: CategoryHandler,
				pos:      call.Pos(),
				end:      call.End(),
				api:      name,
				report:   true,
				message:  name + " built without shim.Conn: " + why + "; pass shim.Conn(nc) with the subscription's connection",
			}
			if sub, ok := stackAt(stack, len(stack)-1).(*ast.CallExpr); ok {
				f.fix = func() []analysis.SuggestedFix { return st.handlerConnFix(sub, call) }
			}
			st.rep.add(f)
			return true
		})
	}
}

// handlerConnFix adds shim.Conn(nc) to the options of the handler call h
// passed straight to sub, nc.Subscribe or nc.QueueSubscribe on a
// *nats.Conn nc.
func (st *state) handlerConnFix(sub, h *ast.CallExpr) []analysis.SuggestedFix {
	fn := calleeFunc(st.info, sub)
	if k := funcKey(fn); k != natsPath+".Conn.Subscribe" && k != natsPath+".Conn.QueueSubscribe" || len(sub.Args) == 0 || ast.Unparen(sub.Args[len(sub.Args)-1]) != h {
		return nil
	}
	sel, ok := ast.Unparen(sub.Fun).(*ast.SelectorExpr)
	if !ok || !isNamed(st.info.TypeOf(sel.X), natsPath, "Conn") {
		return nil
	}
	if _, ok := types.Unalias(st.info.TypeOf(sel.X)).(*types.Pointer); !ok {
		return nil
	}
	hsel, ok := ast.Unparen(h.Fun).(*ast.SelectorExpr)
	if ix, isIndex := ast.Unparen(h.Fun).(*ast.IndexListExpr); isIndex {
		hsel, ok = ix.X.(*ast.SelectorExpr)
	} else if ix, isIndex := ast.Unparen(h.Fun).(*ast.IndexExpr); isIndex {
		hsel, ok = ix.X.(*ast.SelectorExpr)
	}
	if !ok {
		return nil
	}
	pkg, ok := hsel.X.(*ast.Ident)
	recv := st.rep.source(sel.X)
	if !ok || recv == "" {
		return nil
	}
	at := h.Rparen
	return []analysis.SuggestedFix{{
		Message:   "Pass " + pkg.Name + ".Conn(" + recv + ")",
		TextEdits: []analysis.TextEdit{{Pos: at, End: at, NewText: []byte(", " + pkg.Name + ".Conn(" + recv + ")")}},
	}}
}

// importsPath reports whether pkg imports the package path.
func importsPath(pkg *types.Package, path string) bool {
	for _, imp := range pkg.Imports() {
		if imp.Path() == path {
			return true
		}
	}
	return false
}
