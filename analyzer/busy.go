package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/cfg"
)

// busyTests decides whether a success path's test of the reply is a
// "busy" answer (the responder said it did not run it, ask again) or
// only an observation of a periodic send: a test is an answer when some
// outcome of it leaves the loop around the send and the test (a return,
// a break past the loop, a call that does not return, an assignment to
// a variable of the loop's condition) before the loop goes round again.
// When every outcome goes round (if repaired { n++ } in a health check on
// a timer; if reply != "ok" { bad++ } in a load loop), the test is not an
// answer. A test outside any for or range loop around the send (a goto
// loop, recursion) counts as an answer.
type busyTests struct {
	info  *types.Info
	send  token.Pos
	loops []ast.Stmt // the for and range statements of the graph
	memo  map[*cfg.Block]bool
}

// newBusyTests returns the busy tests of g for the send at pos send.
func newBusyTests(info *types.Info, g *cfg.CFG, send token.Pos) *busyTests {
	bt := &busyTests{info: info, send: send, memo: make(map[*cfg.Block]bool)}
	seen := make(map[ast.Stmt]bool)
	for _, b := range g.Blocks {
		switch s := b.Stmt.(type) {
		case *ast.ForStmt, *ast.RangeStmt:
			if !seen[s] {
				seen[s] = true
				bt.loops = append(bt.loops, s)
			}
		}
	}
	return bt
}

// answer reports whether the test ending block b, at e, is an answer.
func (bt *busyTests) answer(b *cfg.Block, e ast.Expr) bool {
	if r, ok := bt.memo[b]; ok {
		return r
	}
	r := true
	if loop := bt.loopAround(e.Pos()); loop != nil && bt.send.IsValid() {
		r = false
		for _, s := range b.Succs {
			if bt.leaves(s, loop) {
				r = true
				break
			}
		}
	}
	bt.memo[b] = r
	return r
}

// loopAround returns the innermost for or range statement containing
// both the send and pos, or nil.
func (bt *busyTests) loopAround(pos token.Pos) ast.Stmt {
	var best ast.Stmt
	for _, l := range bt.loops {
		if l.Pos() <= bt.send && bt.send < l.End() && l.Pos() <= pos && pos < l.End() && (best == nil || l.Pos() > best.Pos()) {
			best = l
		}
	}
	return best
}

// leaves reports whether a path from block from may leave loop before it
// goes round: reach a return, a block without successors (a call that
// does not return, the end of the function), code after the loop, or
// assign a variable its condition reads.
func (bt *busyTests) leaves(from *cfg.Block, loop ast.Stmt) bool {
	var cond ast.Expr
	if fs, ok := loop.(*ast.ForStmt); ok {
		cond = fs.Cond
	}
	seen := make(map[*cfg.Block]bool)
	work := []*cfg.Block{from}
	for len(work) > 0 {
		b := work[len(work)-1]
		work = work[:len(work)-1]
		if seen[b] {
			continue
		}
		seen[b] = true
		if b.Stmt == loop {
			switch b.Kind {
			case cfg.KindForDone, cfg.KindRangeDone:
				return true
			case cfg.KindForLoop, cfg.KindForPost, cfg.KindRangeLoop, cfg.KindForBody:
				continue // going round
			}
		}
		for _, n := range b.Nodes {
			if n.Pos() < loop.Pos() || n.Pos() >= loop.End() {
				return true
			}
			if _, ok := n.(*ast.ReturnStmt); ok {
				return true
			}
			if cond != nil && bt.setsCond(n, cond) {
				return true
			}
		}
		if len(b.Succs) == 0 {
			return true
		}
		work = append(work, b.Succs...)
	}
	return false
}

// setsCond reports whether node n assigns a variable that cond reads.
func (bt *busyTests) setsCond(n ast.Node, cond ast.Expr) bool {
	var lhs []ast.Expr
	switch n := n.(type) {
	case *ast.AssignStmt:
		lhs = n.Lhs
	case *ast.IncDecStmt:
		lhs = []ast.Expr{n.X}
	default:
		return false
	}
	for _, l := range lhs {
		v, _ := rootVar(bt.info, l)
		if v == nil {
			continue
		}
		found := false
		ast.Inspect(cond, func(m ast.Node) bool {
			if id, ok := m.(*ast.Ident); ok && bt.info.Uses[id] == v {
				found = true
			}
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// timeoutCode reports whether e compares a value read from the reply
// with a constant whose name says timeout (resp.Code == CodeTimeout,
// status != StatusDeadlineExceeded), and whether the comparison is ==: a
// transport that turns its send's timeout into a coded response, or a
// gateway's timeout answer, leaves the request's outcome unknown.
func timeoutCode(info *types.Info, e ast.Expr, c carrier) (eq, ok bool) {
	b, isBin := ast.Unparen(e).(*ast.BinaryExpr)
	if !isBin || b.Op != token.EQL && b.Op != token.NEQ {
		return false, false
	}
	x, y := b.X, b.Y
	if isTimeoutConst(info, x) {
		x, y = y, x
	}
	if !isTimeoutConst(info, y) || !readsResult(info, x, c) {
		return false, false
	}
	return b.Op == token.EQL, true
}

// isTimeoutConst reports whether e names a constant whose name says
// timeout.
func isTimeoutConst(info *types.Info, e ast.Expr) bool {
	k, ok := objectOf(info, e).(*types.Const)
	if !ok {
		return false
	}
	name := strings.ToLower(k.Name())
	return strings.Contains(name, "timeout") || strings.Contains(name, "timedout") || strings.Contains(name, "deadlineexceeded")
}

// readsResult reports whether e reads the send's result: its first result
// or a value derived from it, or a field of the received struct other
// than the error (r.resp.Code, with r from a goroutine's channel).
func readsResult(info *types.Info, e ast.Expr, c carrier) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if c.field != nil && !carries(info, c, n) {
				if id, ok := ast.Unparen(n.X).(*ast.Ident); ok && info.Uses[id] == c.v {
					found = true
				}
			}
		case *ast.Ident:
			found = found || c.isResult(info.Uses[n])
		}
		return !found
	})
	return found
}
