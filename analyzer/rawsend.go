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
	isExpr := st.info.Selections[sel] != nil && st.info.Selections[sel].Kind() == types.MethodExpr
	if call != nil && !isExpr && rs.fix != fixNone {
		f.fix = func() []analysis.SuggestedFix { return st.rep.rawFix(call, sel, rs.fix) }
	}
	st.rep.add(f)
}
