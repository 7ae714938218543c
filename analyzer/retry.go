package analyzer

import (
	"fmt"
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/cfg"
)

// retryCheck is the retry check (category retry): sends retried on
// failure in loops, through recursion, and by retry helpers, configured
// (-retry-helpers) or inferred (functions retrying a function parameter,
// exported as retryHelperFact). It knows the helper calls found by the
// scan and reads everything else from the other parts of the pass: the
// value index, the send index, the call graph, the error-flow labels,
// the calls that do not return and the ID check. It reports through the
// reporter.
type retryCheck struct {
	pass  *analysis.Pass
	info  *types.Info
	set   *settings
	rep   *reporter
	vals  *valueIndex
	sends *sendIndex
	graph *callGraph
	flow  *errFlow
	noRet *noReturns
	ids   *idCheck
	acks  *ackIndex // built when a looping body has a select

	helperCalls []helperCall
	// calls of functions of this package with arguments: retry helper
	// calls if the callee turns out to retry a function parameter
	helperCandidates []localCall
	// user tells the packages of the user's own (state.userPackage);
	// ifaceCalls counts the calls of their interfaces' methods
	// (retriedIface), ifaceSites lists those retried (ifaceRetryFact).
	user       func(*types.Package) bool
	ifaceCalls int
	ifaceSites []ifaceRetrySite
}

// addHelperCall records a call of a retry helper, configured or imported
// with a retryHelperFact.
func (rt *retryCheck) addHelperCall(h helperCall) {
	rt.helperCalls = append(rt.helperCalls, h)
}

// addCandidate records a call of a function of this package with
// arguments: a retry helper call if inferHelpers finds that the callee
// retries a function parameter.
func (rt *retryCheck) addCandidate(lc localCall) {
	rt.helperCandidates = append(rt.helperCandidates, lc)
}

// checkRetries reports retried sends: in loops, through recursion, and in
// function literals passed to retry helpers. It works on the control-flow
// graph of each function body that has a send and a loop or a recursive
// call, so for, goto, labelled continue, && and || all come out the same.
func (rt *retryCheck) checkRetries() {
	for _, fb := range rt.vals.list {
		rt.checkBody(fb)
	}
	for _, h := range rt.helperCalls {
		rt.checkHelper(h)
	}
	rt.exportIfaceRetries()
}

// checkBody checks the sends of one function body.
func (rt *retryCheck) checkBody(fb *fnBody) {
	if rt.ifaceCalls > 0 && (fb.loops || rt.graph.mayRecurse(fb)) {
		rt.checkIfaceRetries(fb)
	}
	var sends []sendSite
	for _, call := range fb.calls {
		if s, ok := rt.sends.sendOf(call); ok {
			sends = append(sends, s)
		}
	}
	if len(sends) == 0 && !fb.goes {
		return
	}
	looping := fb.loops || rt.graph.mayRecurse(fb)
	if looping && fb.goes {
		rt.checkGoSends(fb, rt.bodyCFG(fb))
	}
	if len(sends) == 0 || !looping && !rt.anySameOperation(sends) {
		return
	}
	bc := rt.bodyCFG(fb)
	locs := locate(rt.info, bc.g, fb.body, sends)
	for j, s := range sends {
		if looping {
			// A send not retried by the loop or recursion (a first try
			// before the loop) is left to the loop's send.
			if r, ok := rt.retriedAt(fb, bc, locs[j], s); ok && !rt.ids.fixedID(s, fb, r.region(locs[j].b, true), nil) {
				how := "is retried on failure"
				if r.recursed() {
					how = fmt.Sprintf("is retried on failure by calling %s again", fb.self.Name())
				}
				if r.ackWait != nil {
					line := rt.pass.Fset.Position(r.ackWait.Pos()).Line
					rt.rep.addRetry(s.call, s.info.via, fmt.Sprintf("%s is sent again when the timer at line %d fires before its acknowledgement: %s", s.subject(), line, ackAdvice))
					continue
				}
				rt.rep.addRetry(s.call, s.info.via, fmt.Sprintf("%s %s: %s", s.subject(), how, retryAdvice(s.info.kind)))
			}
			continue
		}
		// What runs again: the nodes after the send, up to the later one.
		k, r, ok := rt.sentAgainAt(fb, bc, locs, sends, j)
		if !ok {
			continue
		}
		// Exempt: an ID fixed before the first send, passed to both alike.
		if rt.ids.fixedID(s, fb, r.region(locs[j].b, true)[locs[j].i+1:], nil) && rt.sameOptions(s, sends[k]) {
			continue
		}
		line := rt.pass.Fset.Position(sends[k].call.Pos()).Line
		rt.rep.addRetry(s.call, s.info.via, fmt.Sprintf("%s is retried on failure by the same send at line %d: %s", s.subject(), line, retryAdvice(s.info.kind)))
	}
}

// anySameOperation reports whether two of sends are the same operation
// with the same body, for sentAgainAt.
func (rt *retryCheck) anySameOperation(sends []sendSite) bool {
	for j := range sends {
		for k := j + 1; k < len(sends); k++ {
			if rt.sameOperation(sends[j], sends[k]) {
				return true
			}
		}
	}
	return false
}

// bodyCFG is the control-flow graph of a function body with what the
// path search needs to read it.
type bodyCFG struct {
	g         *cfg.CFG
	caseTag   map[ast.Expr]ast.Expr
	typeCase  map[*cfg.Block]typeCase
	flags     map[*types.Var]int
	recvs     []carrier
	recvNodes map[ast.Node]int
	// ackTimeouts: the timer cases of selects waiting for an
	// acknowledgement (ackwait.go)
	ackTimeouts map[*cfg.Block]*ast.CommClause
}

// bodyCFG builds the control-flow graph of fb, once.
func (rt *retryCheck) bodyCFG(fb *fnBody) *bodyCFG {
	if fb.cfg != nil {
		return fb.cfg
	}
	g := cfg.New(fb.body, rt.noRet.mayReturn)
	bc := &bodyCFG{g: g, caseTag: caseTags(fb.body), typeCase: typeCases(g, fb.body), flags: flagsOf(rt.info, fb)}
	bc.recvs, bc.recvNodes = receives(rt.info, fb.body)
	if hasSelect(fb.body) {
		if rt.acks == nil {
			rt.acks = newAckIndex(rt.info, rt.pass.Files)
		}
		bc.ackTimeouts = rt.acks.ackTimeouts(rt.info, g, fb.body)
	}
	fb.cfg = bc
	return bc
}

// retriedAt reports whether the send s at l is retried: a failure path
// reaches the same send again (the same body; the target may differ),
// while no path on which the send may have worked does, other than one
// that looked at the reply first (a "busy" answer). A loop that sends the
// same body after a success too is a periodic send, one whose failure path
// moves on to another body is iteration, and one whose success path fails
// a test checks that each send fails.
func (rt *retryCheck) retriedAt(fb *fnBody, bc *bodyCFG, l loc, s sendSite) (*pathResult, bool) {
	if l.b == nil {
		return nil, false
	}
	c, ok := carrierOf(rt.info, l.b.Nodes[l.i], s.call)
	if !ok {
		return nil, false
	}
	r := retryPaths(rt.flow, rt.graph, &search{
		fb: fb, g: bc.g, start: l.b, i: l.i,
		carriers: append([]carrier{c}, bc.recvs...), recv: bc.recvNodes,
		self: fb.self, caseTag: bc.caseTag, typeCase: bc.typeCase, flags: bc.flags, d: depsOf(rt.info, fb, s),
		ackTimeouts: bc.ackTimeouts,
	})
	if !retried(r) {
		return nil, false
	}
	return r, true
}

// retried reports whether the paths of r retry the send: the same
// operation to the same target after a failure, and after a success only
// to other targets or with other bodies (a retry, also one nested in a
// batch over targets: acks to each reply subject); or the same body to
// another target after a failure, and never the same body after a
// success (trying the next server). A loop whose success path fails a
// test checks that each send fails.
func retried(r *pathResult) bool {
	if r.expectsFailure {
		return false
	}
	worked := func(exact bool) bool {
		return r.reached(labelSuccess, exact, true) || r.reached(labelNone, exact, true)
	}
	return r.reached(labelFailure, true, false) && !worked(true) || r.reached(labelFailure, false, false) && !worked(false)
}

// receives returns the carriers of the receives in body (msg, err :=
// sub.NextMsg(d)) and of the flushes (err := nc.Flush()), whose outcome
// judges the send before them, and the node of each, by index in the
// carriers that follow the send's own.
func receives(info *types.Info, body *ast.BlockStmt) ([]carrier, map[ast.Node]int) {
	var cs []carrier
	var idx map[ast.Node]int
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.AssignStmt, *ast.DeclStmt:
			var rhs ast.Expr
			if a, ok := n.(*ast.AssignStmt); ok && len(a.Rhs) == 1 {
				rhs = a.Rhs[0]
			} else if ds, ok := n.(*ast.DeclStmt); ok {
				if g, ok := ds.Decl.(*ast.GenDecl); ok && len(g.Specs) == 1 {
					if vs, ok := g.Specs[0].(*ast.ValueSpec); ok && len(vs.Values) == 1 {
						rhs = vs.Values[0]
					}
				}
			}
			call, ok := ast.Unparen(rhs).(*ast.CallExpr)
			if !ok || !judgeFuncs[funcKey(calleeFunc(info, call))] || len(cs) >= 250 {
				return true
			}
			if c, ok := carrierOf(info, n, call); ok {
				if idx == nil {
					idx = make(map[ast.Node]int)
				}
				cs = append(cs, c)
				idx[n] = len(cs) // index 0 is the send's carrier
			}
		}
		return true
	})
	return cs, idx
}
