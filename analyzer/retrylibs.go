package analyzer

import (
	"fmt"
	"go/ast"
	"go/types"
	"slices"

	"golang.org/x/tools/go/cfg"
)

// helperCall is a call of a configured retry helper.
type helperCall struct {
	call     *ast.CallExpr
	key      string // e.g. "github.com/cenkalti/backoff/v4.Retry"
	name     string // e.g. "backoff.Retry"
	inferred bool   // an in-house helper found to retry its function argument
	params   []int  // for an inferred helper: the retried parameters
}

// helperKind says when a retry helper calls its function again.
type helperKind uint8

const (
	helperAlways   helperKind = iota // not known: every send inside counts
	helperOnError                    // on any error except one marked permanent
	helperOnMarked                   // only on an error marked retryable
	helperPoll                       // wait.Poll*: (false, nil) polls again, an error stops
)

// helperKindOf returns how the helper with the given funcKey retries, and
// the functions that mark an error permanent (helperOnError) or retryable
// (helperOnMarked).
func helperKindOf(key string) (helperKind, []string) {
	pkg, _, _ := splitHelper(key)
	lib, ok := retryLibraryOf[pkg]
	if !ok {
		return helperAlways, nil
	}
	markers := make([]string, len(lib.markers))
	for i, m := range lib.markers {
		markers[i] = lib.pkg + "." + m
	}
	return lib.kind, markers
}

// checkHelper reports the sends retried by a call of a retry helper: a send
// inside a function literal passed to it (directly, converted to a function
// type, or through a variable) whose failure makes the literal ask for
// another attempt, or the call itself when a named function that sends is
// passed.
func (rt *retryCheck) checkHelper(h helperCall) {
	kind, markers := helperKindOf(h.key)
	if h.inferred {
		kind, markers = helperOnError, nil
	}
	if onlyConflictHelpers[h.key] || rt.retriesOnlyNotDelivered(h) {
		return
	}
	for k, arg := range h.call.Args {
		if h.inferred && !slices.Contains(h.params, k) {
			continue
		}
		if lit := rt.vals.closureOf(arg); lit != nil {
			fb := rt.vals.bodies[lit.Body]
			if fb == nil {
				continue
			}
			var g *cfg.CFG
			for _, call := range fb.calls {
				s, ok := rt.sends.sendOf(call)
				if !ok || rt.ids.fixedID(s, fb, []ast.Node{lit.Body}, lit) {
					continue
				}
				if g == nil {
					g = cfg.New(lit.Body, rt.noRet.mayReturn)
				}
				if kind != helperAlways {
					if !rt.retriedByHelper(g, lit, fb, s, kind, markers) {
						continue
					}
				} else if discarded(rt.info, g, lit.Body, s) {
					continue // its failure cannot make the helper try again
				}
				rt.rep.addRetry(call, s.info.via, fmt.Sprintf("%s is retried on failure by %s: %s", s.subject(), h.name, retryAdvice(s.info.kind)))
			}
			continue
		}
		var id *ast.Ident
		switch a := ast.Unparen(arg).(type) {
		case *ast.Ident:
			id = a
		case *ast.SelectorExpr:
			id = a.Sel
		}
		if id == nil {
			continue
		}
		if fn, ok := rt.info.Uses[id].(*types.Func); ok {
			if si, ok := rt.sends.sendVia(fn); ok {
				rt.rep.addRetry(h.call, si.via, fmt.Sprintf("%s retries %s, which sends through %s: %s", h.name, fn.Name(), si.via, retryAdvice(si.kind)))
			}
		}
	}
}

// discarded reports whether the send s in body has its error (and reply)
// discarded, as a call statement e.cons.Delete() has.
func discarded(info *types.Info, g *cfg.CFG, body *ast.BlockStmt, s sendSite) bool {
	l := locate(info, g, body, []sendSite{s})[0]
	if l.b == nil {
		return false
	}
	node := l.b.Nodes[l.i]
	if es, ok := node.(*ast.ExprStmt); ok && ast.Unparen(es.X) == s.call {
		return true
	}
	_, ok := carrierOf(info, node, s.call)
	return !ok
}

// retriedByHelper reports whether a path from send s in the function
// literal returns an error that makes the helper try again: for
// helperOnError a non-nil error not wrapped by a permanent marker
// (backoff.Permanent, retry.Unrecoverable), for helperOnMarked one wrapped
// by the retryable marker (retry.RetryableError). Returning the send's
// own error on a path where it is nil, or means nothing was delivered,
// does not count.
func (rt *retryCheck) retriedByHelper(g *cfg.CFG, lit *ast.FuncLit, fb *fnBody, s sendSite, kind helperKind, markers []string) bool {
	sig, ok := rt.info.TypeOf(lit).(*types.Signature)
	if !ok {
		return true
	}
	n := sig.Results().Len()
	if n == 0 || !isErrorType(sig.Results().At(n-1).Type()) {
		return true
	}
	locs := locate(rt.info, g, lit.Body, []sendSite{s})
	if locs[0].b == nil {
		return true
	}
	c, ok := carrierOf(rt.info, locs[0].b.Nodes[locs[0].i], s.call)
	if !ok {
		return false // its error is discarded (or it has none): as in loops
	}
	isMarker := func(e ast.Expr) (*ast.CallExpr, bool) {
		call, ok := ast.Unparen(e).(*ast.CallExpr)
		if !ok {
			return nil, false
		}
		k := funcKey(calleeFunc(rt.info, call))
		for _, m := range markers {
			if k == m {
				return call, true
			}
		}
		return nil, false
	}
	// own reports whether e is the send's own error, still held.
	own := func(e ast.Expr, valid bool) bool {
		return ast.Unparen(e) == s.call || (valid && carries(rt.info, c, e))
	}
	// failAgain: a path on which the send failed asks for another
	// attempt; okAgain: so does a path on which it may have worked (the
	// literal repeats whatever the send did, until some other condition
	// holds). As for loops, only the first without the second is a retry.
	failAgain, okAgain := false, false
	// okStop: a path on which the send worked ends the poll on an answer
	// (return r.Ready, nil; if string(msg.Data) == "ready" { return true,
	// nil }): its (false, nil) are "not yet" answers, as a busy answer is
	// in a loop, and do not make the poll periodic.
	okStop := false
	var answered func(*ast.ReturnStmt) bool
	if kind == helperPoll {
		answered = answerTests(rt.info, lit.Body, withDerived(rt.info, indexOf(fb), c))
	}
	again := func(l label) {
		switch l {
		case labelFailure:
			failAgain = true
		case labelSuccess, labelNone:
			okAgain = true
		}
	}
	d := &deps{info: rt.info, effects: make(map[ast.Node][]effect)}
	retryPaths(rt.flow, rt.graph, &search{fb: fb, g: g, start: locs[0].b, i: locs[0].i, carriers: []carrier{c}, caseTag: caseTags(lit.Body), d: d, onReturn: func(ret *ast.ReturnStmt, l label, valid bool) {
		var e ast.Expr
		switch {
		case len(ret.Results) == n:
			e = ret.Results[n-1]
		case len(ret.Results) == 1:
			e = ret.Results[0] // return f() with f's results
		default:
			failAgain = failAgain || kind == helperOnError // a bare return: unknown
			return
		}
		if kind == helperPoll {
			// (false, nil) polls again; an error or done stops.
			if len(ret.Results) != 2 || !isNil(rt.info, ret.Results[1]) || l == labelSafe {
				return
			}
			done := ret.Results[0]
			if l == labelSuccess && answered(ret) {
				v, isConst := boolConst(rt.info, done)
				okStop = okStop || !isConst || v
			}
			if v, ok := boolConst(rt.info, done); ok {
				if !v {
					again(l)
				}
				return
			}
			if valid || l == labelNone {
				_, f := rt.flow.cond(c, done)
				for _, fl := range []label{labelFailure, labelSuccess} {
					if one(l).then(f)&one(fl) != 0 {
						again(fl)
					}
				}
			}
			return
		}
		// ownAgain: the send's own error is returned, asking again
		// exactly when it failed.
		ownAgain := func(x ast.Expr) bool {
			if !own(x, valid) {
				return false
			}
			if l == labelFailure || l == labelNone {
				failAgain = true
			}
			return true
		}
		switch {
		case isNil(rt.info, e):
		case kind == helperOnError:
			if _, ok := isMarker(e); ok {
				return
			}
			if !ownAgain(e) {
				again(l)
			}
		case kind == helperOnMarked:
			if m, ok := isMarker(e); ok && len(m.Args) == 1 && !ownAgain(m.Args[0]) {
				again(l)
			}
		}
	}})
	return failAgain && (!okAgain || okStop)
}

// answerTests returns a test of whether a return statement of body
// answers from the reply c holds: its results read the reply, or an if
// statement around it has a condition that does.
func answerTests(info *types.Info, body *ast.BlockStmt, c carrier) func(*ast.ReturnStmt) bool {
	answers := make(map[*ast.ReturnStmt]bool)
	ast.PreorderStack(body, nil, func(n ast.Node, stack []ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			reads := slices.ContainsFunc(n.Results, func(e ast.Expr) bool { return readsReply(info, e, c) })
			for _, p := range stack {
				if is, ok := p.(*ast.IfStmt); ok && readsReply(info, is.Cond, c) {
					reads = true
				}
			}
			answers[n] = reads
		}
		return true
	})
	return func(ret *ast.ReturnStmt) bool { return answers[ret] }
}

// retriesOnlyNotDelivered reports whether the helper call is told to retry
// only errors that prove nothing was delivered: a retry-go RetryIf option
// or a client-go OnError predicate that is true only for them.
func (rt *retryCheck) retriesOnlyNotDelivered(h helperCall) bool {
	if i, ok := predicateArgs[h.key]; ok && i < len(h.call.Args) {
		return rt.safePredicateExpr(h.call.Args[i])
	}
	for _, a := range h.call.Args {
		opt, ok := ast.Unparen(a).(*ast.CallExpr)
		if ok && len(opt.Args) == 1 && retryIfOptions[funcKey(calleeFunc(rt.info, opt))] {
			return rt.safePredicateExpr(opt.Args[0])
		}
	}
	return false
}

// safePredicateExpr reports whether e, a func(error) bool, is true only for
// errors proving nothing was delivered: a predicate known to be, or a
// function literal each of whose returns is false or such a test of its
// parameter.
func (rt *retryCheck) safePredicateExpr(e ast.Expr) bool {
	if fn, ok := objectOf(rt.info, e).(*types.Func); ok {
		return rt.flow.isSafePredicate(fn)
	}
	lit := rt.vals.closureOf(e)
	if lit == nil || len(lit.Type.Params.List) != 1 || len(lit.Type.Params.List[0].Names) != 1 {
		return false
	}
	param, _ := rt.info.Defs[lit.Type.Params.List[0].Names[0]].(*types.Var)
	if param == nil {
		return false
	}
	// Follow the paths through the body, reading the tests of the error
	// on the way: every true result must be a test (or on a path) that
	// proves nothing was delivered.
	g := cfg.New(lit.Body, rt.noRet.mayReturn)
	if len(g.Blocks) == 0 {
		return false
	}
	safe, returned := true, false
	c := carrier{v: param}
	retryPaths(rt.flow, rt.graph, &search{fb: rt.vals.bodies[lit.Body], g: g, start: g.Blocks[0], i: -1, carriers: []carrier{c}, caseTag: caseTags(lit.Body),
		d: &deps{info: rt.info, effects: make(map[ast.Node][]effect)},
		onReturn: func(ret *ast.ReturnStmt, l label, valid bool) {
			returned = true
			if len(ret.Results) != 1 {
				safe = false
				return
			}
			r := ret.Results[0]
			if v, ok := boolConst(rt.info, r); ok {
				safe = safe && (!v || l == labelSafe)
				return
			}
			t, _ := rt.flow.cond(c, r)
			safe = safe && valid && one(l).then(t) == one(labelSafe)
		}})
	return safe && returned
}
