package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/types/typeutil"
)

// scan walks one file for raw sends, connects and calls that may send.
func (st *state) scan(file *ast.File) {
	ast.PreorderStack(file, nil, func(n ast.Node, stack []ast.Node) bool {
		st.flows.at(n, stack)
		switch n := n.(type) {
		case *ast.AssignStmt, *ast.ValueSpec, *ast.IncDecStmt:
			st.store(n, stack)
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				st.store(n, stack)
			}
		case *ast.CompositeLit:
			fb := st.vals.innermost(stack)
			litFields(st.info, n, func(f *types.Var, val ast.Expr) {
				st.vals.litField(f, val)
				st.conn.litField(f, val, fb)
			})
		}
		switch n := n.(type) {
		case *ast.SelectorExpr:
			st.selector(n, stack)
		case *ast.CallExpr:
			st.vals.stores.addressArgs(n)
			st.call(n, stack)
		case *ast.FuncDecl:
			st.flow.predicateCandidate(n)
			if n.Body != nil {
				self, _ := st.info.Defs[n.Name].(*types.Func)
				st.vals.addDecl(n, self)
			}
		case *ast.FuncLit:
			st.vals.addLit(n)
		case *ast.ForStmt, *ast.RangeStmt:
			if fb := st.vals.innermost(stack); fb != nil {
				fb.loops = true
			}
		case *ast.GoStmt:
			if fb := st.vals.innermost(stack); fb != nil {
				fb.goes = true
			}
		case *ast.BranchStmt:
			if fb := st.vals.innermost(stack); fb != nil && n.Tok == token.GOTO {
				fb.loops = true
			}
		}
		return true
	})
}

// store records the stores of the node n, once, in the package's store
// list, for the value index, the option fields and the bodies' indexes.
func (st *state) store(n ast.Node, stack []ast.Node) {
	for _, a := range st.vals.stores.record(st.info, n, st.vals.innermost(stack)) {
		st.vals.note(&a)
		st.conn.noteStore(&a)
	}
}

// call handles one call: connects, and calls that may send.
func (st *state) call(call *ast.CallExpr, stack []ast.Node) {
	fb := st.vals.innermost(stack)
	fn := calleeFunc(st.info, call)
	if fn == nil {
		// Perhaps a local variable bound to a function literal, or a
		// function literal called on the spot.
		switch ast.Unparen(call.Fun).(type) {
		case *ast.Ident, *ast.FuncLit, *ast.SelectorExpr: // a function field too
			if fb != nil {
				fb.calls = append(fb.calls, call)
			}
			st.conn.addValueCall(call, fb)
		}
		return
	}
	if sig, _ := fn.Type().(*types.Signature); fb != nil && sig != nil && sig.Recv() != nil && types.IsInterface(sig.Recv().Type()) && fn.Pkg() != st.pass.Pkg {
		// An interface method: a send if its receiver only holds NATS
		// values (concreteSend).
		fb.calls = append(fb.calls, call)
	}
	if fb != nil && retriedIface(st.info, call, fn, st.userPackage) != nil {
		st.retry.ifaceCalls++
	}
	if st.set.helpers[funcKey(fn)] {
		st.retry.addHelperCall(helperCall{call: call, key: funcKey(fn), name: helperName(fn)})
	} else if ps, ok := importedHelper(st.pass, fn); ok {
		st.retry.addHelperCall(helperCall{call: call, key: funcKey(fn), name: helperName(fn), inferred: true, params: ps})
		if fb != nil {
			fb.calls = append(fb.calls, call) // for helpers passing their parameter on
		}
	} else if fn.Pkg() == st.pass.Pkg && len(call.Args) > 0 {
		st.retry.addCandidate(localCall{call, fn})
	}
	if reschedulers[funcKey(fn)] && fb != nil {
		fb.reschedules = true
	}
	st.conn.addConnect(call, fn, fb)
	var caller *types.Func
	if decl, inLit := enclosing(stack); decl != nil && !inLit {
		caller, _ = st.info.Defs[decl.Name].(*types.Func)
	}
	if si, ok := knownSender(st.pass, fn); ok {
		st.sends.addSend(call, caller, si)
		if fb != nil {
			fb.calls = append(fb.calls, call)
		}
		return
	}
	if fn.Pkg() == st.pass.Pkg {
		st.sends.addLocal(call, fn)
		if fb != nil {
			fb.calls = append(fb.calls, call)
		}
		if caller != nil {
			st.graph.add(caller, fn)
		}
	}
}

// selectedFunc returns the function or method a selector denotes, if any.
func selectedFunc(info *types.Info, sel *ast.SelectorExpr) *types.Func {
	if s := info.Selections[sel]; s != nil {
		if s.Kind() == types.FieldVal {
			return nil
		}
		fn, _ := s.Obj().(*types.Func)
		return fn
	}
	fn, _ := info.Uses[sel.Sel].(*types.Func)
	return fn
}

// calleeFunc returns the function or method called, if it is one.
func calleeFunc(info *types.Info, call *ast.CallExpr) *types.Func {
	fn, _ := typeutil.Callee(info, call).(*types.Func)
	if fn != nil {
		fn = fn.Origin()
	}
	return fn
}

// enclosing returns the function declaration enclosing the top of stack and
// whether a function literal lies in between. A function literal called on
// the spot (func() { ... }(), also deferred) runs as part of the enclosing
// function and does not count; one started by a go statement does.
func enclosing(stack []ast.Node) (decl *ast.FuncDecl, inLit bool) {
	for i := len(stack) - 1; i >= 0; i-- {
		switch n := stack[i].(type) {
		case *ast.FuncLit:
			if !calledOnTheSpot(n, stack[:i]) {
				inLit = true
			}
		case *ast.FuncDecl:
			return n, inLit
		}
	}
	return nil, inLit
}

// calledOnTheSpot reports whether lit, whose ancestors are stack, is called
// where it is written, other than by a go statement.
func calledOnTheSpot(lit *ast.FuncLit, stack []ast.Node) bool {
	var child ast.Node = lit
	for i := len(stack) - 1; i >= 0; i-- {
		switch p := stack[i].(type) {
		case *ast.ParenExpr:
			child = p
			continue
		case *ast.CallExpr:
			if p.Fun != child {
				return false
			}
			_, isGo := stackAt(stack, i-1).(*ast.GoStmt)
			return !isGo
		}
		return false
	}
	return false
}

func stackAt(stack []ast.Node, i int) ast.Node {
	if i < 0 || i >= len(stack) {
		return nil
	}
	return stack[i]
}

func isBool(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsBoolean != 0
}

// helperName names a retry helper for messages: pkg.Func, or
// (*pkg.Type).Method.
func helperName(fn *types.Func) string {
	if sig, ok := fn.Type().(*types.Signature); ok && sig.Recv() != nil {
		return "(" + types.TypeString(sig.Recv().Type(), func(p *types.Package) string { return p.Name() }) + ")." + fn.Name()
	}
	return fn.Pkg().Name() + "." + fn.Name()
}
