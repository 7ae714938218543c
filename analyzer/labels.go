package analyzer

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"strings"
)

// label classifies a path leaving a send by the tests of the send's error
// it passes.
type label uint8

const (
	labelNone    label = iota // no test of the error yet
	labelFailure              // the error is not nil
	labelSuccess              // the error is nil
	labelSafe                 // the error guarantees nothing was delivered (no responders)
	numLabels
)

// labels is a set of labels: the labels a path may carry after an edge.
type labels uint8

func one(l label) labels { return 1 << l }

// refine returns the labels of a path labelled l that then meets a test
// with outcome y. An unlabelled path takes the test's labels; a failure
// may be refined by a later test saying nothing was delivered (err != nil,
// then errors.Is(err, nats.ErrNoResponders)); other labels stay.
func refine(l label, y labels) labels {
	switch l {
	case labelNone:
		return y
	case labelFailure:
		if y&one(labelSafe) != 0 {
			if y == one(labelSafe) {
				return one(labelSafe)
			}
			return one(labelSafe) | one(labelFailure)
		}
	}
	return one(l)
}

// then returns the labels of paths that carry x and then meet y.
func (x labels) then(y labels) labels {
	var r labels
	for l := labelNone; l < numLabels; l++ {
		if x&one(l) != 0 {
			r |= refine(l, y)
		}
	}
	return r
}

// carrier is what holds the outcome of one send: the error variable
// assigned from the call, or the call expression itself when it is tested
// directly, and the reply variable when the call also returns a pointer or
// interface (msg, _ := nc.Request(...); msg == nil is a failure).
type carrier struct {
	v     *types.Var
	call  *ast.CallExpr
	reply *types.Var
}

// carrierOf finds how the error of the send call in node is held.
func (st *state) carrierOf(node ast.Node, call *ast.CallExpr) (carrier, bool) {
	t := st.info.TypeOf(call.Fun)
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
		return carrier{call: call}, true
	}
	if len(lhs) != n {
		return carrier{}, false
	}
	var c carrier
	if id, ok := lhs[n-1].(*ast.Ident); ok {
		c.v, _ = st.info.ObjectOf(id).(*types.Var) // nil if blank
	}
	if n >= 2 {
		if id, ok := lhs[0].(*ast.Ident); ok {
			if v, ok := st.info.ObjectOf(id).(*types.Var); ok && isNilable(v.Type()) {
				c.reply = v
			}
		}
	}
	if c.v == nil && c.reply == nil {
		return carrier{}, false
	}
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

// is reports whether e is the carrier.
func (st *state) is(c carrier, e ast.Expr) bool {
	e = ast.Unparen(e)
	if c.call != nil {
		return e == c.call
	}
	id, ok := e.(*ast.Ident)
	return ok && c.v != nil && st.info.Uses[id] == c.v
}

// isReply reports whether e is the carrier's reply variable.
func (st *state) isReply(c carrier, e ast.Expr) bool {
	id, ok := ast.Unparen(e).(*ast.Ident)
	return ok && c.reply != nil && st.info.Uses[id] == c.reply
}

// mentionsReply reports whether the condition e looks at the reply.
func (st *state) mentionsReply(e ast.Expr, c carrier) bool {
	if c.reply == nil {
		return false
	}
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && st.info.Uses[id] == c.reply {
			found = true
		}
		return !found
	})
	return found
}

// assignsCarrier reports whether node may change what c holds.
func (st *state) assignsCarrier(node ast.Node, c carrier) bool {
	return assigns(st.info, node, c.v) || (c.v == nil && assigns(st.info, node, c.reply))
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

// nothingSent reports whether e denotes an error that means the message
// reached no subscriber, so sending it again cannot repeat an effect:
// nats.ErrNoResponders and jetstream.ErrNoStreamResponse (nobody listening),
// nats.ErrMaxPayload, shim.ErrPayloadTooLarge and claimcheck.ErrTooLarge
// (refused before sending), claimcheck.ErrNotPublished and
// claimcheck.ErrClosed (nothing published).
func (st *state) nothingSent(e ast.Expr) bool {
	obj, ok := objectOf(st.info, e).(*types.Var)
	if !ok || obj.Pkg() == nil {
		return false
	}
	return notDeliveredErrors[obj.Pkg().Path()+"."+obj.Name()]
}

func isNil(info *types.Info, e ast.Expr) bool {
	return info.Types[e].IsNil()
}

// classifyOf reports whether e is shim.Classify(carrier).
func (st *state) classifyOf(c carrier, e ast.Expr) bool {
	if id, ok := ast.Unparen(e).(*ast.Ident); ok {
		// o := shim.Classify(err); o == shim.OutcomeNotRun
		if v, ok := st.info.Uses[id].(*types.Var); ok && st.assigned[v] == 1 && st.defs[v] != nil {
			e = st.defs[v]
		}
	}
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	return ok && len(call.Args) == 1 && funcKey(calleeFunc(st.info, call)) == shimClassify && st.is(c, call.Args[0])
}

// outcome returns the labels of "shim.Classify(err) == e" being true, if e
// is one of the shim.Outcome constants.
func (st *state) outcome(e ast.Expr) (labels, bool) {
	obj, ok := objectOf(st.info, e).(*types.Const)
	if !ok || obj.Pkg() == nil || obj.Pkg().Path() != shimPath {
		return 0, false
	}
	if l, ok := shimOutcomes[obj.Name()]; ok {
		return one(l), true
	}
	return 0, false
}

// compare returns the labels of the true and false outcomes of
// "x == y" (eq) or "x != y", if one side is the carrier or
// shim.Classify(carrier).
func (st *state) compare(c carrier, x, y ast.Expr, eq bool) (t, f labels) {
	none := one(labelNone)
	other := y
	switch {
	case st.isReply(c, x) || st.isReply(c, y):
		other := y
		if st.isReply(c, y) {
			other = x
		}
		if !isNil(st.info, other) {
			return none, none
		}
		// reply == nil: nothing came back.
		t, f = one(labelFailure), one(labelSuccess)
		if !eq {
			t, f = f, t
		}
		return t, f
	case st.is(c, x):
	case st.is(c, y):
		other = x
	case st.classifyOf(c, x), st.classifyOf(c, y):
		if st.classifyOf(c, y) {
			y = x // the Outcome constant is on the left
		}
		l, ok := st.outcome(y)
		if !ok {
			return none, none
		}
		t, f = l, none
		if l == one(labelSuccess) {
			f = one(labelFailure)
		}
		if !eq {
			t, f = f, t
		}
		return t, f
	default:
		if l, ok := st.refusedCode(x, y); ok {
			t, f = l, none
			if !eq {
				t, f = f, t
			}
			return t, f
		}
		return none, none
	}
	if isNil(st.info, other) {
		t, f = one(labelSuccess), one(labelFailure)
	} else {
		fail := labelFailure
		if st.nothingSent(other) {
			fail = labelSafe
		}
		t, f = one(fail), none
	}
	if !eq {
		t, f = f, t
	}
	return t, f
}

// cond returns the labels of the true and false outcomes of a condition.
func (st *state) cond(c carrier, e ast.Expr) (t, f labels) {
	none := one(labelNone)
	switch e := e.(type) {
	case *ast.ParenExpr:
		return st.cond(c, e.X)
	case *ast.Ident:
		// ok := err == nil; if ok { ... }
		if v, ok := st.info.Uses[e].(*types.Var); ok && st.assigned[v] == 1 {
			if def := st.defs[v]; def != nil && isBool(v.Type()) {
				return st.cond(c, def)
			}
		}
	case *ast.UnaryExpr:
		if e.Op == token.NOT {
			t, f := st.cond(c, e.X)
			return f, t
		}
	case *ast.BinaryExpr:
		switch e.Op {
		case token.LAND:
			tx, fx := st.cond(c, e.X)
			ty, fy := st.cond(c, e.Y)
			return tx.then(ty), fx | tx.then(fy)
		case token.LOR:
			tx, fx := st.cond(c, e.X)
			ty, fy := st.cond(c, e.Y)
			return tx | fx.then(ty), fx.then(fy)
		case token.EQL, token.NEQ:
			return st.compare(c, e.X, e.Y, e.Op == token.EQL)
		}
	case *ast.CallExpr:
		// errors.Is(err, X), errors.As(err, &t), or any other predicate
		// of the error: true means it is some error.
		uses := false
		for _, a := range e.Args {
			uses = uses || st.is(c, a)
		}
		if sel, ok := ast.Unparen(e.Fun).(*ast.SelectorExpr); ok && st.is(c, sel.X) {
			uses = true
		}
		if !uses {
			return none, none
		}
		fn := calleeFunc(st.info, e)
		if st.isSafePredicate(fn) {
			return one(labelSafe), none
		}
		switch funcKey(fn) {
		case "errors.Is":
			if len(e.Args) == 2 && st.nothingSent(e.Args[1]) {
				return one(labelSafe), none
			}
		case shimMayHaveRun:
			// False only for an error that certainly did not run
			// (MayHaveRun(nil) is true).
			return none, one(labelSafe)
		}
		return one(labelFailure), none
	}
	return none, none
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
func (st *state) transforms(node ast.Node, c carrier, l label) bool {
	as, ok := node.(*ast.AssignStmt)
	if !ok || c.v == nil || len(as.Lhs) != 1 || len(as.Rhs) != 1 || as.Tok != token.ASSIGN {
		return false
	}
	call, ok := ast.Unparen(as.Rhs[0]).(*ast.CallExpr)
	if !ok {
		return false
	}
	key := funcKey(calleeFunc(st.info, call))
	if key == "fmt.Errorf" && l != labelNone && l != labelSuccess && wraps(st.info, call) {
		return slices.ContainsFunc(call.Args[1:], func(a ast.Expr) bool { return st.is(c, a) })
	}
	if newErrorFuncs[key] {
		return false
	}
	for _, a := range call.Args {
		if st.is(c, a) {
			return true
		}
	}
	return false
}

// caseTags maps the expressions of case clauses of tagged switches to
// their tag, so that "case nil:" reads as "tag == nil".
func caseTags(body *ast.BlockStmt) map[ast.Expr]ast.Expr {
	caseTag := make(map[ast.Expr]ast.Expr)
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.SwitchStmt:
			if n.Tag != nil {
				for _, cc := range n.Body.List {
					for _, e := range cc.(*ast.CaseClause).List {
						caseTag[e] = n.Tag
					}
				}
			}
		}
		return true
	})
	return caseTag
}

// wraps reports whether the fmt.Errorf call has a constant format with %w.
func wraps(info *types.Info, call *ast.CallExpr) bool {
	if len(call.Args) < 2 {
		return false
	}
	tv := info.Types[call.Args[0]]
	return tv.Value != nil && tv.Value.Kind() == constant.String && strings.Contains(constant.StringVal(tv.Value), "%w")
}
