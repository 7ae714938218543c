package analyzer

import (
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// selector reports a raw send API named by sel: called, or taken as a
// method value or method expression.
func (st *state) selector(sel *ast.SelectorExpr, stack []ast.Node) {
	fn := selectedFunc(st.info, sel)
	if fn == nil {
		return
	}
	rs, ok := rawSendOf(funcKey(fn))
	if !ok {
		return
	}
	// Find the call, if sel is (possibly parenthesized) in call position.
	var call *ast.CallExpr
	var child ast.Node = sel
	for i := len(stack) - 1; i >= 0; i-- {
		if p, ok := stack[i].(*ast.ParenExpr); ok {
			child = p
			continue
		}
		if c, ok := stack[i].(*ast.CallExpr); ok && c.Fun == child {
			call = c
		}
		break
	}
	f := &finding{
		category: CategoryRawSend,
		api:      "raw " + rs.display,
		report:   st.rep.reported(CategoryRawSend),
	}
	subject := "raw " + rs.display
	if call != nil {
		f.pos, f.end = call.Pos(), call.End()
	} else {
		f.pos, f.end = sel.Pos(), sel.End()
		subject += " taken as a function value"
	}
	sep := " "
	if strings.HasPrefix(rs.advice, "use ") || strings.HasPrefix(rs.advice, "encode ") {
		sep = ": "
	}
	f.message = subject + sep + rs.advice
	if call != nil && publishRequests[funcKey(fn)] {
		switch st.replyUse(call, st.vals.innermost(stack)) {
		case replyGather:
			f.message = subject + " gathers replies with no deadline or size cap: " + gatherAdvice
		case replyLongLived:
			f.message = subject + " sends to a long-lived reply subject with no size cap: " + gatherAdvice
		}
	}
	isExpr := st.info.Selections[sel] != nil && st.info.Selections[sel].Kind() == types.MethodExpr
	if call != nil && !isExpr && rs.fix != fixNone {
		f.fix = func() []analysis.SuggestedFix { return st.rep.rawFix(call, sel, rs.fix) }
	}
	st.rep.add(f)
}

// replyKind says how a hand-rolled request (PublishRequest) uses its reply
// subject.
type replyKind int

const (
	replyOne       replyKind = iota // a fresh inbox, one reply: a request
	replyGather                     // a fresh inbox collecting several replies
	replyLongLived                  // a reply subject not made for this call
)

// replyUse tells how the PublishRequest call in the body fb uses its reply
// subject: one whose subscription in the function auto-unsubscribes after
// other than one message or is read by NextMsg in a loop gathers replies;
// one with no subscription in the function, not made there by an inbox
// call (nats.NewInbox, nc.NewRespInbox), is long-lived.
func (st *state) replyUse(call *ast.CallExpr, fb *fnBody) replyKind {
	if len(call.Args) < 2 || fb == nil {
		return replyOne
	}
	isInbox := func(e ast.Expr) bool {
		c, ok := ast.Unparen(e).(*ast.CallExpr)
		return ok && inboxFuncs[funcKey(calleeFunc(st.info, c))]
	}
	reply := call.Args[1]
	if isInbox(reply) {
		return replyOne
	}
	v := localVar(st.info, reply)
	if v == nil {
		return replyLongLived
	}
	// The subscriptions on the inbox, and how they are read.
	subs := make(map[*types.Var]bool)
	ast.Inspect(fb.body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Rhs) != 1 {
			return true
		}
		if c, ok := ast.Unparen(as.Rhs[0]).(*ast.CallExpr); ok && len(c.Args) > 0 && localVar(st.info, c.Args[0]) == v {
			if s := localVar(st.info, as.Lhs[0]); s != nil {
				subs[s] = true
			}
		}
		return true
	})
	gather := false
	ast.PreorderStack(fb.body, nil, func(n ast.Node, stack []ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok || gather {
			return !gather
		}
		sel, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr)
		if !ok || !subs[localVar(st.info, sel.X)] {
			return true
		}
		key := funcKey(calleeFunc(st.info, c))
		switch {
		case key == autoUnsubscribe && len(c.Args) == 1:
			n, ok := intConst(st.info, c.Args[0])
			gather = !ok || n != 1
		case receiveFuncs[key]:
			for _, p := range stack {
				switch p.(type) {
				case *ast.ForStmt, *ast.RangeStmt:
					// A loop around the receive, not around the request.
					gather = gather || p.Pos() > call.Pos() || call.End() > p.End()
				}
			}
		}
		return !gather
	})
	switch {
	case gather:
		return replyGather
	case len(subs) == 0 && !isInbox(st.vals.def(v)):
		return replyLongLived // replies go to a subscription made elsewhere
	}
	return replyOne
}
