package analyzer

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ast/astutil"
	"golang.org/x/tools/go/cfg"
)

const retryWhy = "a timeout or lost connection may follow a send that already took effect, so the retry can repeat the side effect; reconcile instead, or use a JetStream publish with a fixed message ID"

// label classifies a path leaving a send by the first test of the send's
// error it passes.
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

// then returns the labels of paths that carry x and then meet y: a path
// already labelled keeps its label.
func (x labels) then(y labels) labels {
	var r labels
	for l := labelNone; l < numLabels; l++ {
		if x&one(l) == 0 {
			continue
		}
		if l == labelNone {
			r |= y
		} else {
			r |= one(l)
		}
	}
	return r
}

// fnBody is a function body (declaration or literal) with calls that may
// matter to the retry check.
type fnBody struct {
	body  *ast.BlockStmt
	self  *types.Func  // the declared function, for recursion; nil for a literal
	lit   *ast.FuncLit // the literal, nil for a declaration
	calls []*ast.CallExpr
	loops bool // contains a for, range or goto
}

// sendSite is a send call found in a function body.
type sendSite struct {
	call *ast.CallExpr
	via  string
	js   bool
}

// checkRetries reports retried sends: in loops, through recursion, and in
// function literals passed to retry helpers. It works on the control-flow
// graph of each function body that has a send and a loop or a recursive
// call, so for, goto, labelled continue, && and || all come out the same.
func (st *state) checkRetries() {
	for _, fb := range st.bodies {
		st.checkBody(fb)
	}
	for _, h := range st.helperCalls {
		st.checkHelper(h)
	}
}

// sendOf reports whether call sends, and through what: a known sender, a
// function of this package found to send, or a local variable bound to a
// function literal that sends.
func (st *state) sendOf(call *ast.CallExpr) (sendSite, bool) {
	if fn := st.calleeFunc(call); fn != nil {
		via, ok := st.sendVia(fn)
		return sendSite{call, via, ok && jetStreamSend(fn)}, ok
	}
	if lit := st.closureOf(call.Fun); lit != nil {
		if via := st.litVia(lit); via != "" {
			return sendSite{call, via, false}, true
		}
	}
	return sendSite{}, false
}

// closureOf returns the function literal a local variable is bound to, if
// the variable is assigned exactly once, from a function literal.
func (st *state) closureOf(e ast.Expr) *ast.FuncLit {
	e = ast.Unparen(e)
	if lit, ok := e.(*ast.FuncLit); ok {
		return lit
	}
	id, ok := e.(*ast.Ident)
	if !ok {
		return nil
	}
	v, ok := st.pass.TypesInfo.Uses[id].(*types.Var)
	if !ok {
		return nil
	}
	return st.closures[v]
}

// litVia returns what a function literal sends through, or "".
func (st *state) litVia(lit *ast.FuncLit) string {
	if via, ok := st.litSends[lit]; ok {
		return via
	}
	st.litSends[lit] = "" // break cycles
	fb := st.bodies[lit.Body]
	if fb == nil {
		return ""
	}
	for _, call := range fb.calls {
		if s, ok := st.sendOf(call); ok {
			st.litSends[lit] = s.via
			return s.via
		}
	}
	return ""
}

// mayReturn reports whether a call may return, for the control-flow graph.
func (st *state) mayReturn(call *ast.CallExpr) bool {
	if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok {
		if b, ok := st.pass.TypesInfo.Uses[id].(*types.Builtin); ok && b.Name() == "panic" {
			return false
		}
	}
	fn := st.calleeFunc(call)
	if fn == nil {
		return true
	}
	switch funcKey(fn) {
	case "os.Exit", "runtime.Goexit",
		"log.Fatal", "log.Fatalf", "log.Fatalln", "log.Panic", "log.Panicf", "log.Panicln",
		"log.Logger.Fatal", "log.Logger.Fatalf", "log.Logger.Fatalln", "log.Logger.Panic", "log.Logger.Panicf", "log.Logger.Panicln",
		"testing.common.Fatal", "testing.common.Fatalf", "testing.common.FailNow",
		"testing.common.Skip", "testing.common.Skipf", "testing.common.SkipNow":
		return false
	}
	return true
}

// carrier is what holds the error of one send: a variable assigned from
// the call, or the call expression itself when it is tested directly.
type carrier struct {
	v    *types.Var
	call *ast.CallExpr
}

// carrierOf finds how the error of the send call in node is held.
func (st *state) carrierOf(node ast.Node, call *ast.CallExpr) (carrier, bool) {
	t := st.pass.TypesInfo.TypeOf(call.Fun)
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
	id, ok := lhs[n-1].(*ast.Ident)
	if !ok {
		return carrier{}, false
	}
	v, ok := st.pass.TypesInfo.ObjectOf(id).(*types.Var)
	if !ok {
		return carrier{}, false // blank
	}
	return carrier{v: v}, true
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
	return ok && st.pass.TypesInfo.Uses[id] == c.v
}

// nothingSent reports whether e denotes an error that means the message
// reached no subscriber, so sending it again cannot repeat an effect:
// nats.ErrNoResponders and jetstream.ErrNoStreamResponse (nobody listening),
// nats.ErrMaxPayload, shim.ErrPayloadTooLarge and claimcheck.ErrTooLarge
// (refused before sending).
func (st *state) nothingSent(e ast.Expr) bool {
	var id *ast.Ident
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		id = x
	case *ast.SelectorExpr:
		id = x.Sel
	default:
		return false
	}
	obj, ok := st.pass.TypesInfo.Uses[id].(*types.Var)
	if !ok || obj.Pkg() == nil {
		return false
	}
	switch obj.Pkg().Path() + "." + obj.Name() {
	case natsPath + ".ErrNoResponders", jetstreamPath + ".ErrNoStreamResponse", natsPath + ".ErrMaxPayload",
		shimPath + ".ErrPayloadTooLarge", claimcheckPath + ".ErrTooLarge":
		return true
	}
	return false
}

func (st *state) isNil(e ast.Expr) bool {
	return st.pass.TypesInfo.Types[e].IsNil()
}

// compare returns the labels of the true and false outcomes of
// "x == y" (eq) or "x != y", if one side is the carrier.
func (st *state) compare(c carrier, x, y ast.Expr, eq bool) (t, f labels) {
	none := one(labelNone)
	other := y
	switch {
	case st.is(c, x):
	case st.is(c, y):
		other = x
	default:
		return none, none
	}
	if st.isNil(other) {
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
		if fn := st.calleeFunc(e); funcKey(fn) == "errors.Is" && len(e.Args) == 2 && st.nothingSent(e.Args[1]) {
			return one(labelSafe), none
		}
		return one(labelFailure), none
	}
	return none, none
}

// assigns reports whether node (a node of the control-flow graph) may
// change the variable v.
func (st *state) assigns(node ast.Node, v *types.Var) bool {
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
				if id, ok := ast.Unparen(l).(*ast.Ident); ok && st.pass.TypesInfo.ObjectOf(id) == v {
					found = true
				}
			}
		case *ast.UnaryExpr:
			if id, ok := ast.Unparen(n.X).(*ast.Ident); ok && n.Op == token.AND && st.pass.TypesInfo.Uses[id] == v {
				found = true
			}
		case *ast.ValueSpec:
			for _, name := range n.Names {
				if st.pass.TypesInfo.Defs[name] == v {
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

// callsFunc reports whether node contains a call of fn (outside function literals).
func (st *state) callsFunc(node ast.Node, fn *types.Func) bool {
	if fn == nil {
		return false
	}
	found := false
	ast.Inspect(node, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			if st.calleeFunc(n) == fn {
				found = true
			}
		}
		return !found
	})
	return found
}

// checkBody checks the sends of one function body.
func (st *state) checkBody(fb *fnBody) {
	var sends []sendSite
	recursive := false
	for _, call := range fb.calls {
		if s, ok := st.sendOf(call); ok {
			sends = append(sends, s)
		}
		if fb.self != nil && st.calleeFunc(call) == fb.self {
			recursive = true
		}
	}
	if len(sends) == 0 || (!fb.loops && !recursive) {
		return
	}
	g := cfg.New(fb.body, st.mayReturn)

	// Locate each send: block and node index.
	type loc struct {
		b *cfg.Block
		i int
	}
	want := make(map[*ast.CallExpr]int, len(sends))
	for i, s := range sends {
		want[s.call] = i
	}
	locs := make([]loc, len(sends))
	found := make([]bool, len(sends))
	// caseTag maps the expressions of case clauses of tagged switches to
	// their tag, so that "case nil:" reads as "tag == nil".
	caseTag := make(map[ast.Expr]ast.Expr)
	ast.Inspect(fb.body, func(n ast.Node) bool {
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
	for _, b := range g.Blocks {
		if !b.Live {
			continue
		}
		for i, node := range b.Nodes {
			ast.Inspect(node, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncLit:
					return false
				case *ast.CallExpr:
					if j, ok := want[n]; ok && !found[j] {
						locs[j], found[j] = loc{b, i}, true
					}
				}
				return true
			})
		}
	}
	for j, s := range sends {
		if !found[j] {
			continue
		}
		l := locs[j]
		c, ok := st.carrierOf(l.b.Nodes[l.i], s.call)
		if !ok {
			continue
		}
		reached, recursed := st.retryPaths(g, l.b, l.i, c, fb.self, caseTag)
		// A path that reaches the send again without a test of the
		// error may be a success path too.
		if !reached[labelFailure] || reached[labelSuccess] || reached[labelNone] {
			continue
		}
		if s.js && st.fixedMsgID(s.call, st.loopRegion(l.b), nil) {
			continue
		}
		how := "retried on failure"
		if recursed {
			how = fmt.Sprintf("retried on failure by calling %s again", fb.self.Name())
		}
		st.addRetry(s.call, s.via, fmt.Sprintf("send through %s %s: %s", s.via, how, retryWhy))
	}
}

// retryPaths follows the paths from the send in node i of block start and
// reports which labels the paths carry when they reach the send again, or a
// recursive call of self.
func (st *state) retryPaths(g *cfg.CFG, start *cfg.Block, i int, c carrier, self *types.Func, caseTag map[ast.Expr]ast.Expr) (reached [numLabels]bool, recursed bool) {
	type node struct {
		b     *cfg.Block
		l     label
		valid bool // the carrier still holds the send's error
	}
	seen := make(map[node]bool)
	var queue []node
	push := func(b *cfg.Block, l label, valid bool) {
		if b == start {
			reached[l] = true
			return
		}
		n := node{b, l, valid}
		if !seen[n] {
			seen[n] = true
			queue = append(queue, n)
		}
	}
	walk := func(b *cfg.Block, from int, l label, valid bool) {
		for k := from; k < len(b.Nodes); k++ {
			n := b.Nodes[k]
			if k != i || b != start {
				if st.callsFunc(n, self) {
					reached[l] = true
					recursed = true
					return
				}
				if st.assigns(n, c.v) {
					valid = false
				}
			}
		}
		if b.Kind == cfg.KindRangeLoop && c.v != nil {
			if r, ok := b.Stmt.(*ast.RangeStmt); ok && (st.assigns(&ast.AssignStmt{Lhs: nonNil(r.Key, r.Value)}, c.v)) {
				valid = false
			}
		}
		if len(b.Succs) == 2 && len(b.Nodes) > 0 && b.Kind != cfg.KindRangeLoop {
			t, f := one(labelNone), one(labelNone)
			if e, ok := b.Nodes[len(b.Nodes)-1].(ast.Expr); ok && valid && l == labelNone {
				if tag, ok := caseTag[e]; ok {
					t, f = st.compare(c, tag, e, true)
				} else {
					t, f = st.cond(c, e)
				}
			}
			for _, edge := range []struct {
				b  *cfg.Block
				ls labels
			}{{b.Succs[0], t}, {b.Succs[1], f}} {
				for nl := labelNone; nl < numLabels; nl++ {
					if edge.ls&one(nl) != 0 {
						if l != labelNone {
							nl = l
						}
						push(edge.b, nl, valid)
					}
				}
			}
			return
		}
		for _, s := range b.Succs {
			push(s, l, valid)
		}
	}
	walk(start, i, labelNone, true)
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		walk(n.b, 0, n.l, n.valid)
	}
	return reached, recursed
}

func nonNil(es ...ast.Expr) []ast.Expr {
	var r []ast.Expr
	for _, e := range es {
		if e != nil {
			r = append(r, e)
		}
	}
	return r
}

// loopRegion returns the nodes that may run again after a send in block b:
// those of the blocks reachable from its successors, with the key and value
// of range loops among them.
func (st *state) loopRegion(b *cfg.Block) []ast.Node {
	in := make(map[*cfg.Block]bool)
	work := append([]*cfg.Block(nil), b.Succs...)
	var nodes []ast.Node
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		if in[x] {
			continue
		}
		in[x] = true
		nodes = append(nodes, x.Nodes...)
		if r, ok := x.Stmt.(*ast.RangeStmt); ok && x.Kind == cfg.KindRangeLoop {
			nodes = append(nodes, &ast.AssignStmt{Lhs: nonNil(r.Key, r.Value), Tok: token.ASSIGN})
		}
		work = append(work, x.Succs...)
	}
	return nodes
}

// addRetry records a retry finding at call.
func (st *state) addRetry(call *ast.CallExpr, api, msg string) {
	st.findings = append(st.findings, &finding{
		category: CategoryRetry,
		pos:      call.Pos(),
		end:      call.End(),
		api:      api,
		message:  msg,
		report:   true,
	})
}

// helperCall is a call of a configured retry helper.
type helperCall struct {
	call *ast.CallExpr
	name string // e.g. "backoff.Retry"
}

// checkHelper reports the sends retried by a call of a retry helper: every
// send inside a function literal passed to it, or the call itself when a
// named function that sends is passed.
func (st *state) checkHelper(h helperCall) {
	for _, arg := range h.call.Args {
		if lit := st.closureOf(arg); lit != nil {
			fb := st.bodies[lit.Body]
			if fb == nil {
				continue
			}
			for _, call := range fb.calls {
				s, ok := st.sendOf(call)
				if !ok || (s.js && st.fixedMsgID(call, []ast.Node{lit.Body}, lit)) {
					continue
				}
				st.addRetry(call, s.via, fmt.Sprintf("send through %s inside a function retried by %s: %s", s.via, h.name, retryWhy))
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
		if fn, ok := st.pass.TypesInfo.Uses[id].(*types.Func); ok {
			if via, ok := st.sendVia(fn); ok {
				st.addRetry(h.call, via, fmt.Sprintf("%s retries %s, which sends through %s: %s", h.name, fn.Name(), via, retryWhy))
			}
		}
	}
}

// fixedMsgID reports whether a JetStream publish carries a message ID that
// is the same on every attempt: set by jetstream.WithMsgID or nats.MsgId
// among its options, or as the Nats-Msg-Id header of its message, from an
// expression that does not change in region (the nodes that run again on a
// retry). lit is the retried function literal, if any: its parameters
// change between attempts.
func (st *state) fixedMsgID(call *ast.CallExpr, region []ast.Node, lit *ast.FuncLit) bool {
	inv := &invariance{st: st, region: region, lit: lit}
	for _, arg := range call.Args {
		arg = ast.Unparen(arg)
		if opt, ok := arg.(*ast.CallExpr); ok && len(opt.Args) == 1 {
			switch funcKey(st.calleeFunc(opt)) {
			case jetstreamPath + ".WithMsgID", natsPath + ".MsgId":
				if inv.fixed(opt.Args[0], 0) {
					return true
				}
			}
			continue
		}
		if t := st.pass.TypesInfo.TypeOf(arg); t != nil && isNamed(t, natsPath, "Msg") && st.msgHasFixedID(arg, inv) {
			return true
		}
	}
	return false
}

// msgHasFixedID reports whether the message expression m gets a fixed
// Nats-Msg-Id header: in a composite literal, or by Header.Set or
// Header.Add on a variable holding it anywhere in the function.
func (st *state) msgHasFixedID(m ast.Expr, inv *invariance) bool {
	if u, ok := m.(*ast.UnaryExpr); ok && u.Op == token.AND {
		m = ast.Unparen(u.X)
	}
	if lit, ok := m.(*ast.CompositeLit); ok {
		return st.literalHasFixedID(lit, inv)
	}
	id, ok := m.(*ast.Ident)
	if !ok {
		return false
	}
	v, ok := st.pass.TypesInfo.Uses[id].(*types.Var)
	if !ok {
		return false
	}
	body := st.bodyOf(v)
	if body == nil {
		return false
	}
	fixed := false
	ast.Inspect(body, func(n ast.Node) bool {
		if fixed {
			return false
		}
		switch n := n.(type) {
		case *ast.CallExpr:
			// v.Header.Set(key, id) or v.Header.Add(key, id)
			sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr)
			if !ok || len(n.Args) != 2 {
				return true
			}
			if k := funcKey(st.calleeFunc(n)); k != natsPath+".Header.Set" && k != natsPath+".Header.Add" {
				return true
			}
			hdr, ok := ast.Unparen(sel.X).(*ast.SelectorExpr)
			if !ok || hdr.Sel.Name != "Header" {
				return true
			}
			if root, ok := ast.Unparen(hdr.X).(*ast.Ident); ok && st.pass.TypesInfo.Uses[root] == v &&
				st.isMsgIDKey(n.Args[0]) && inv.fixed(n.Args[1], 0) {
				fixed = true
			}
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				lid, ok := l.(*ast.Ident)
				if !ok || st.pass.TypesInfo.ObjectOf(lid) != v || len(n.Rhs) != len(n.Lhs) {
					continue
				}
				rhs := ast.Unparen(n.Rhs[i])
				if u, ok := rhs.(*ast.UnaryExpr); ok && u.Op == token.AND {
					rhs = ast.Unparen(u.X)
				}
				if lit, ok := rhs.(*ast.CompositeLit); ok && st.literalHasFixedID(lit, inv) {
					fixed = true
				}
			}
		}
		return true
	})
	return fixed
}

// bodyOf returns the body of the function that declares the local variable v.
func (st *state) bodyOf(v *types.Var) *ast.BlockStmt {
	var best *ast.BlockStmt
	for body := range st.bodies {
		if body.Pos() <= v.Pos() && v.Pos() < body.End() && (best == nil || body.Pos() > best.Pos()) {
			best = body
		}
	}
	if best != nil {
		return best
	}
	// v may be a parameter: find the function whose type contains it.
	for _, fb := range st.bodies {
		var typ *ast.FuncType
		if fb.lit != nil {
			typ = fb.lit.Type
		} else if fb.self != nil {
			if path, _ := astutil.PathEnclosingInterval(st.files[st.pass.Fset.File(fb.body.Pos())], fb.body.Pos(), fb.body.Pos()); len(path) > 0 {
				for _, n := range path {
					if fd, ok := n.(*ast.FuncDecl); ok {
						typ = fd.Type
						break
					}
				}
			}
		}
		if typ != nil && typ.Pos() <= v.Pos() && v.Pos() < typ.End() {
			return fb.body
		}
	}
	return nil
}

// literalHasFixedID reports whether a nats.Msg literal has a Header literal
// with a fixed Nats-Msg-Id.
func (st *state) literalHasFixedID(lit *ast.CompositeLit, inv *invariance) bool {
	for _, elt := range lit.Elts {
		kv, ok := elt.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		if key, ok := kv.Key.(*ast.Ident); !ok || key.Name != "Header" {
			continue
		}
		hl, ok := ast.Unparen(kv.Value).(*ast.CompositeLit)
		if !ok {
			continue
		}
		for _, he := range hl.Elts {
			hkv, ok := he.(*ast.KeyValueExpr)
			if !ok || !st.isMsgIDKey(hkv.Key) {
				continue
			}
			vals, ok := ast.Unparen(hkv.Value).(*ast.CompositeLit)
			if !ok || len(vals.Elts) == 0 {
				continue
			}
			if inv.fixed(vals.Elts[0], 0) {
				return true
			}
		}
	}
	return false
}

func (st *state) isMsgIDKey(e ast.Expr) bool {
	tv := st.pass.TypesInfo.Types[e]
	return tv.Value != nil && tv.Value.Kind() == constant.String && constant.StringVal(tv.Value) == "Nats-Msg-Id"
}

// invariance decides whether an expression has the same value on every
// run of a region of code.
type invariance struct {
	st     *state
	region []ast.Node
	lit    *ast.FuncLit
}

// fixed reports whether e has the same value each time the region runs:
// constants, package-level variables, variables not assigned in the region
// (or assigned once there from a fixed expression), and pure functions of
// those.
func (inv *invariance) fixed(e ast.Expr, depth int) bool {
	if depth > 8 {
		return false
	}
	info := inv.st.pass.TypesInfo
	if tv, ok := info.Types[e]; ok && tv.Value != nil {
		return true
	}
	switch x := e.(type) {
	case *ast.ParenExpr:
		return inv.fixed(x.X, depth+1)
	case *ast.BinaryExpr:
		return inv.fixed(x.X, depth+1) && inv.fixed(x.Y, depth+1)
	case *ast.UnaryExpr:
		return x.Op != token.ARROW && x.Op != token.AND && inv.fixed(x.X, depth+1)
	case *ast.SelectorExpr:
		if _, ok := info.Uses[x.Sel].(*types.Var); ok && info.Selections[x] == nil {
			return true // a package-level variable of another package
		}
		return info.Selections[x] != nil && info.Selections[x].Kind() == types.FieldVal && inv.fixed(x.X, depth+1)
	case *ast.IndexExpr:
		return inv.fixed(x.X, depth+1) && inv.fixed(x.Index, depth+1)
	case *ast.CallExpr:
		if tv, ok := info.Types[x.Fun]; ok && tv.IsType() && len(x.Args) == 1 {
			return inv.fixed(x.Args[0], depth+1) // a conversion
		}
		if !pureFunc(funcKey(inv.st.calleeFunc(x))) {
			return false
		}
		for _, a := range x.Args {
			if !inv.fixed(a, depth+1) {
				return false
			}
		}
		return true
	case *ast.Ident:
		v, ok := info.Uses[x].(*types.Var)
		if !ok {
			return false
		}
		if v.Pkg() != nil && v.Parent() == v.Pkg().Scope() {
			return true
		}
		if inv.lit != nil && inv.lit.Type.Pos() <= v.Pos() && v.Pos() < inv.lit.Type.End() {
			return false // a parameter of the retried literal
		}
		rhs, n := inv.assignments(v)
		switch n {
		case 0:
			return true
		case 1:
			return rhs != nil && inv.fixed(rhs, depth+1)
		}
	}
	return false
}

// assignments counts the assignments to v in the region, returning the
// right-hand side when there is exactly one simple one.
func (inv *invariance) assignments(v *types.Var) (ast.Expr, int) {
	info := inv.st.pass.TypesInfo
	var rhs ast.Expr
	n := 0
	for _, node := range inv.region {
		ast.Inspect(node, func(x ast.Node) bool {
			switch x := x.(type) {
			case *ast.AssignStmt:
				for i, l := range x.Lhs {
					if id, ok := ast.Unparen(l).(*ast.Ident); ok && info.ObjectOf(id) == v {
						n++
						rhs = nil
						if len(x.Rhs) == len(x.Lhs) && (x.Tok == token.DEFINE || x.Tok == token.ASSIGN) {
							rhs = x.Rhs[i]
						}
					}
				}
			case *ast.IncDecStmt:
				if id, ok := ast.Unparen(x.X).(*ast.Ident); ok && info.Uses[id] == v {
					n++
				}
			case *ast.UnaryExpr:
				if id, ok := ast.Unparen(x.X).(*ast.Ident); ok && x.Op == token.AND && info.Uses[id] == v {
					n += 2 // its address escapes: never fixed
				}
			case *ast.ValueSpec:
				for i, name := range x.Names {
					if info.Defs[name] == v {
						n++
						rhs = nil
						if len(x.Values) == len(x.Names) {
							rhs = x.Values[i]
						}
					}
				}
			}
			return true
		})
	}
	return rhs, n
}

// pureFunc reports whether the function with the given funcKey returns a
// result that depends only on its arguments.
func pureFunc(key string) bool {
	switch key {
	case "fmt.Sprint", "fmt.Sprintf", "fmt.Sprintln",
		"strconv.Itoa", "strconv.FormatInt", "strconv.FormatUint", "strconv.Quote",
		"strings.Join", "strings.ToLower", "strings.ToUpper", "strings.TrimSpace",
		"path.Join":
		return true
	}
	return false
}
