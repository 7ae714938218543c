package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"
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
// then errors.Is(err, nats.ErrNoResponders)); a failure that meets a test
// saying the error is nil is a path that cannot happen (err ==
// nats.ErrTimeout is false, then err != nil is false: err is nil, not
// some other error); other labels stay.
func refine(l label, y labels) labels {
	switch l {
	case labelNone:
		return y
	case labelFailure:
		if y == one(labelSuccess) {
			return 0
		}
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

// nothingSent reports whether e denotes an error that proves the send
// whose outcome c holds had no effect: one of notDeliveredErrors, or one of
// notWrittenErrors for the send it is listed with (a publish's
// nats.ErrConnectionClosed, not a request's).
func nothingSent(info *types.Info, c carrier, e ast.Expr) bool {
	obj, ok := objectOf(info, e).(*types.Var)
	if !ok || obj.Pkg() == nil {
		return false
	}
	key := obj.Pkg().Path() + "." + obj.Name()
	return notDeliveredErrors[key] || c.send != "" && notWrittenErrors[key][c.send]
}

// classifyOf reports whether e is shim.Classify(carrier).
func (ef *errFlow) classifyOf(c carrier, e ast.Expr) bool {
	if id, ok := ast.Unparen(e).(*ast.Ident); ok {
		// o := shim.Classify(err); o == shim.OutcomeNotRun
		if v, ok := ef.info.Uses[id].(*types.Var); ok && ef.vals.def(v) != nil {
			e = ef.vals.def(v)
		}
	}
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	return ok && len(call.Args) == 1 && funcKey(calleeFunc(ef.info, call)) == shimClassify && carries(ef.info, c, call.Args[0])
}

// outcome returns the labels of "shim.Classify(err) == e" being true, if e
// is one of the shim.Outcome constants.
func outcome(info *types.Info, e ast.Expr) (labels, bool) {
	obj, ok := objectOf(info, e).(*types.Const)
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
func (ef *errFlow) compare(c carrier, x, y ast.Expr, eq bool) (t, f labels) {
	none := one(labelNone)
	other := y
	switch {
	case carriesReply(ef.info, c, x) || carriesReply(ef.info, c, y):
		other := y
		if carriesReply(ef.info, c, y) {
			other = x
		}
		if !isNil(ef.info, other) {
			return none, none
		}
		// reply == nil: nothing came back.
		t, f = one(labelFailure), one(labelSuccess)
		if !eq {
			t, f = f, t
		}
		return t, f
	case carries(ef.info, c, x):
	case carries(ef.info, c, y):
		other = x
	case ef.classifyOf(c, x), ef.classifyOf(c, y):
		if ef.classifyOf(c, y) {
			y = x // the Outcome constant is on the left
		}
		l, ok := outcome(ef.info, y)
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
		if l, ok := refusedCode(ef.info, x, y); ok {
			t, f = l, none
			if !eq {
				t, f = f, t
			}
			return t, f
		}
		return none, none
	}
	if isNil(ef.info, other) {
		t, f = one(labelSuccess), one(labelFailure)
	} else {
		// err == X: true is that error; false is nil or another one.
		fail := labelFailure
		if nothingSent(ef.info, c, other) || ef.isDeclined(other) {
			fail = labelSafe
		}
		t, f = one(fail), one(labelSuccess)|one(labelFailure)
	}
	if !eq {
		t, f = f, t
	}
	return t, f
}

// cond returns the labels of the true and false outcomes of a condition.
func (ef *errFlow) cond(c carrier, e ast.Expr) (t, f labels) {
	none := one(labelNone)
	switch e := e.(type) {
	case *ast.ParenExpr:
		return ef.cond(c, e.X)
	case *ast.Ident:
		// ok := err == nil; if ok { ... }
		if v, ok := ef.info.Uses[e].(*types.Var); ok {
			if def := ef.vals.def(v); def != nil && isBool(v.Type()) {
				return ef.cond(c, def)
			}
		}
	case *ast.UnaryExpr:
		if e.Op == token.NOT {
			t, f := ef.cond(c, e.X)
			return f, t
		}
	case *ast.BinaryExpr:
		switch e.Op {
		case token.LAND:
			tx, fx := ef.cond(c, e.X)
			ty, fy := ef.cond(c, e.Y)
			return tx.then(ty), fx | tx.then(fy)
		case token.LOR:
			tx, fx := ef.cond(c, e.X)
			ty, fy := ef.cond(c, e.Y)
			return tx | fx.then(ty), fx.then(fy)
		case token.EQL, token.NEQ:
			return ef.compare(c, e.X, e.Y, e.Op == token.EQL)
		}
	case *ast.CallExpr:
		// errors.Is(err, X), errors.As(err, &t), or any other predicate
		// of the error: true means it is some error.
		uses := false
		for _, a := range e.Args {
			uses = uses || carries(ef.info, c, a)
		}
		if sel, ok := ast.Unparen(e.Fun).(*ast.SelectorExpr); ok && carries(ef.info, c, sel.X) {
			uses = true
		}
		if !uses {
			return none, none
		}
		fn := calleeFunc(ef.info, e)
		if ef.isSafePredicate(fn) {
			return one(labelSafe), none
		}
		switch funcKey(fn) {
		case errorsIs:
			if len(e.Args) == 2 && (nothingSent(ef.info, c, e.Args[1]) || ef.isDeclined(e.Args[1])) {
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
