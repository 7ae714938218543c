package analyzer

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"strings"
)

// carrier is what holds the outcome of one send: the error variable
// assigned from the call, or the call expression itself when it is tested
// directly, and the reply variable when the call also returns a pointer or
// interface (msg, _ := nc.Request(...); msg == nil is a failure).
type carrier struct {
	v     *types.Var
	call  *ast.CallExpr
	reply *types.Var
	// result is the variable assigned the call's first result, of any
	// type: a success path whose condition looks at it (info.Leader !=
	// old, with info a struct) judged the reply before looping.
	result *types.Var
	// derived are the other variables of the function that hold values
	// read from the result (set by withDerived): what was decoded from the
	// reply, and the error of that decoding.
	derived map[*types.Var]bool
	// errDecodes: the send's error variable is also assigned the error of
	// reading the result (resp, err := decode(reply.Data)); a success
	// path's condition on it then looks at the reply.
	errDecodes bool
	// send is the funcKey of the send API called, which decides the
	// errors judged per call (notWrittenErrors).
	send string
	// field, if set, is the field of v that holds the error: v is a
	// struct received from the channel a goroutine sent the outcome on
	// (r := <-ch; r.err != nil).
	field *types.Var
	// recvd: the carrier is a receive from a goroutine's channel; an
	// error stored in its variable instead (err = ErrTimeout, in the
	// select's timeout case) is a failure of the send, whose outcome the
	// goroutine still holds.
	recvd bool
}

// carrierOf finds how the error of the send call in node is held.
func carrierOf(info *types.Info, node ast.Node, call *ast.CallExpr) (carrier, bool) {
	t := info.TypeOf(call.Fun)
	if t == nil {
		return carrier{}, false
	}
	sig, ok := t.Underlying().(*types.Signature)
	if !ok {
		return carrier{}, false
	}
	n := sig.Results().Len()
	if n == 0 || !isErrorType(sig.Results().At(n-1).Type()) {
		return carrier{}, false
	}
	var lhs []ast.Expr
	switch s := node.(type) {
	case *ast.AssignStmt:
		if len(s.Rhs) == 1 && ast.Unparen(s.Rhs[0]) == call {
			lhs = s.Lhs
		}
	case *ast.DeclStmt:
		if g, ok := s.Decl.(*ast.GenDecl); ok && len(g.Specs) == 1 {
			if vs, ok := g.Specs[0].(*ast.ValueSpec); ok && len(vs.Values) == 1 && ast.Unparen(vs.Values[0]) == call {
				for _, name := range vs.Names {
					lhs = append(lhs, name)
				}
			}
		}
	}
	if lhs == nil {
		return carrier{call: call, send: funcKey(calleeFunc(info, call))}, true
	}
	if len(lhs) != n {
		return carrier{}, false
	}
	var c carrier
	if id, ok := lhs[n-1].(*ast.Ident); ok {
		c.v, _ = info.ObjectOf(id).(*types.Var) // nil if blank
	}
	if n >= 2 {
		if id, ok := lhs[0].(*ast.Ident); ok {
			if v, ok := info.ObjectOf(id).(*types.Var); ok {
				c.result = v
				if isNilable(v.Type()) {
					c.reply = v
				}
			}
		}
	}
	if c.v == nil && c.reply == nil {
		return carrier{}, false
	}
	c.send = funcKey(calleeFunc(info, call))
	return c, true
}

// isNilable reports whether t is a pointer or an interface.
func isNilable(t types.Type) bool {
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Interface:
		return true
	}
	return false
}

func isErrorType(t types.Type) bool {
	return types.Identical(t, types.Universe.Lookup("error").Type())
}

// carries reports whether e is the carrier.
func carries(info *types.Info, c carrier, e ast.Expr) bool {
	e = ast.Unparen(e)
	if c.call != nil {
		return e == c.call
	}
	if c.field != nil {
		// r.err, with r received from a goroutine's channel
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		id, ok := ast.Unparen(sel.X).(*ast.Ident)
		return ok && c.v != nil && info.Uses[id] == c.v && info.Uses[sel.Sel] == c.field
	}
	id, ok := e.(*ast.Ident)
	return ok && c.v != nil && info.Uses[id] == c.v
}

// carriesReply reports whether e is the carrier's reply variable.
func carriesReply(info *types.Info, c carrier, e ast.Expr) bool {
	id, ok := ast.Unparen(e).(*ast.Ident)
	return ok && c.reply != nil && info.Uses[id] == c.reply
}

// mentionsReply reports whether the condition e looks at the reply (the
// call's first result, whatever its type).
func mentionsReply(info *types.Info, e ast.Expr, c carrier) bool {
	if c.result == nil {
		return false
	}
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && (c.isResult(info.Uses[id]) || c.errDecodes && info.Uses[id] == c.v) {
			found = true
		}
		return !found
	})
	return found
}

// readsReply reports whether the condition e looks at the reply other than
// to test it against nil (reply != nil is the outcome, not its content).
func readsReply(info *types.Info, e ast.Expr, c carrier) bool {
	if c.result == nil {
		return false
	}
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if (n.Op == token.EQL || n.Op == token.NEQ) && (carriesReply(info, c, n.X) && isNil(info, n.Y) || carriesReply(info, c, n.Y) && isNil(info, n.X)) {
				return false
			}
		case *ast.Ident:
			found = found || c.isResult(info.Uses[n])
		}
		return !found
	})
	return found
}

// isResult reports whether o is the send's result or a value read from it.
func (c carrier) isResult(o types.Object) bool {
	v, ok := o.(*types.Var)
	return ok && v != nil && (v == c.result || c.derived[v])
}

// withDerived returns c with the variables of the body whose index is idx
// (outside function literals) that are assigned a value read from the
// send's result: the left side of an assignment whose right side
// mentions the result or such a variable (decoded := decode(reply.Data),
// and the error of json.Unmarshal(reply.Data, &decoded)), and a variable
// whose address goes into a call that reads the result (&decoded). The
// send's own error variable is never one (its test right after the send
// is the send's outcome); when it is reassigned from a read of the
// result, errDecodes lets a success path's later condition on it count as
// a look.
func withDerived(info *types.Info, idx *assignIndex, c carrier) carrier {
	if c.result == nil {
		return c
	}
	derived := make(map[*types.Var]bool)
	reads := func(e ast.Node) bool {
		found := false
		ast.Inspect(e, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				if v, ok := info.Uses[id].(*types.Var); ok && (v == c.result || derived[v]) {
					found = true
				}
			}
			return !found
		})
		return found
	}
	add := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok {
			return false
		}
		v, ok := info.ObjectOf(id).(*types.Var)
		if ok && v != nil && v == c.v {
			c.errDecodes = true
			return false
		}
		if !ok || v == nil || v == c.result || derived[v] {
			return false
		}
		derived[v] = true
		return true
	}
	readsAny := func(es []ast.Expr) bool { return slices.ContainsFunc(es, func(e ast.Expr) bool { return reads(e) }) }
	for changed := true; changed; {
		changed = false
		var last ast.Node // the statement (or call) of the previous target, and whether it reads
		lastReads := false
		for i := range idx.all {
			a := &idx.all[i]
			if a.inLit {
				continue
			}
			var key ast.Node
			var from []ast.Expr
			switch n := a.node.(type) {
			case *ast.AssignStmt:
				key, from = n, n.Rhs
			case *ast.ValueSpec:
				key, from = n, n.Values
			case *ast.UnaryExpr:
				if a.call == nil {
					continue
				}
				key, from = a.call, a.call.Args
			default:
				continue
			}
			if key != last {
				last, lastReads = key, readsAny(from)
			}
			if lastReads {
				changed = add(a.lhs) || changed
			}
		}
	}
	if len(derived) > 0 {
		c.derived = derived
	}
	return c
}

// assignsCarrier reports whether node may change what c holds.
func assignsCarrier(info *types.Info, node ast.Node, c carrier) bool {
	return assigns(info, node, c.v) || (c.v == nil && assigns(info, node, c.reply))
}

// objectOf returns the object an identifier or qualified identifier
// denotes.
func objectOf(info *types.Info, e ast.Expr) types.Object {
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		return info.Uses[x]
	case *ast.SelectorExpr:
		return info.Uses[x.Sel]
	}
	return nil
}

func isNil(info *types.Info, e ast.Expr) bool {
	return info.Types[e].IsNil()
}

// assigns reports whether node (a node of the control-flow graph) may
// change the variable v.
func assigns(info *types.Info, node ast.Node, v *types.Var) bool {
	if v == nil {
		return false
	}
	found := false
	ast.Inspect(node, func(n ast.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if id, ok := ast.Unparen(l).(*ast.Ident); ok && info.ObjectOf(id) == v {
					found = true
				}
			}
		case *ast.UnaryExpr:
			if id, ok := ast.Unparen(n.X).(*ast.Ident); ok && n.Op == token.AND && info.Uses[id] == v {
				found = true
			}
		case *ast.ValueSpec:
			for _, name := range n.Names {
				if info.Defs[name] == v {
					found = true
				}
			}
		case *ast.FuncLit:
			return false
		}
		return true
	})
	return found
}

// transforms reports whether node is "err = f(..., err, ...)": the error
// passed through a function that keeps nil nil (a wrapper such as
// wrap(err)), so that later tests still tell the send's outcome.
// fmt.Errorf and errors.New never return nil; fmt.Errorf with %w keeps
// errors.Is seeing the send's error, so it counts on a path where the
// error is already known not to be nil.
func transforms(info *types.Info, node ast.Node, c carrier, l label) bool {
	as, ok := node.(*ast.AssignStmt)
	if !ok || c.v == nil || len(as.Lhs) != 1 || len(as.Rhs) != 1 || as.Tok != token.ASSIGN {
		return false
	}
	if c.recvd && c.field == nil && carries(info, c, as.Lhs[0]) && isNewError(info, as.Rhs[0]) {
		return true
	}
	call, ok := ast.Unparen(as.Rhs[0]).(*ast.CallExpr)
	if !ok {
		return false
	}
	key := funcKey(calleeFunc(info, call))
	if key == fmtErrorf && l != labelNone && l != labelSuccess && wraps(info, call) {
		return slices.ContainsFunc(call.Args[1:], func(a ast.Expr) bool { return carries(info, c, a) })
	}
	if newErrorFuncs[key] {
		return false
	}
	for _, a := range call.Args {
		if carries(info, c, a) {
			return true
		}
	}
	return false
}

// wraps reports whether the fmt.Errorf call has a constant format with %w.
func wraps(info *types.Info, call *ast.CallExpr) bool {
	if len(call.Args) < 2 {
		return false
	}
	tv := info.Types[call.Args[0]]
	return tv.Value != nil && tv.Value.Kind() == constant.String && strings.Contains(constant.StringVal(tv.Value), "%w")
}

// isNewError reports whether e is an error that is never nil: a
// package-level error variable (ErrTimeout, context.DeadlineExceeded) or
// a call of errors.New or fmt.Errorf.
func isNewError(info *types.Info, e ast.Expr) bool {
	if call, ok := ast.Unparen(e).(*ast.CallExpr); ok {
		return newErrorFuncs[funcKey(calleeFunc(info, call))]
	}
	v, ok := objectOf(info, e).(*types.Var)
	return ok && v.Pkg() != nil && v.Parent() == v.Pkg().Scope() && isErrorType(v.Type())
}
