package analyzer

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/cfg"
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

// fnBody is a function body (declaration or literal) with calls that may
// matter to the retry check.
type fnBody struct {
	body    *ast.BlockStmt
	self    *types.Func  // the declared function, for recursion; nil for a literal
	lit     *ast.FuncLit // the literal, nil for a declaration
	calls   []*ast.CallExpr
	loops   bool       // contains a for, range or goto
	assigns []ast.Node // assignments in the body, outside function literals (lazily)
}

// sendSite is a send call found in a function body.
type sendSite struct {
	call *ast.CallExpr
	info sendInfo
	name string // what the call calls, for messages
}

// subject names the send for a message: the API itself, or what the user
// called and the API it ends up in.
func (s sendSite) subject() string {
	if s.info.direct {
		return "call of " + s.name
	}
	return fmt.Sprintf("call of %s (which sends through %s)", s.name, s.info.via)
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
// function of this package found to send, or a function literal that sends
// (bound once to a local variable, or called on the spot).
func (st *state) sendOf(call *ast.CallExpr) (sendSite, bool) {
	if fn := st.calleeFunc(call); fn != nil {
		si, ok := st.sendVia(fn)
		if !ok {
			return sendSite{}, false
		}
		name := si.via
		if !si.direct {
			name = st.funcName(fn)
		}
		return sendSite{call, si, name}, true
	}
	if lit := st.closureOf(call.Fun); lit != nil {
		if si := st.litInfo(lit); si != nil {
			name := "a function literal"
			if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok {
				name = id.Name
			}
			return sendSite{call, sendInfo{via: si.via, kind: si.kind}, name}, true
		}
	}
	return sendSite{}, false
}

// funcName names fn as the user wrote it: Name or (*T).Name in this
// package, pkg.Name or (*pkg.T).Name in another.
func (st *state) funcName(fn *types.Func) string {
	qual := func(p *types.Package) string {
		if p == st.pass.Pkg {
			return ""
		}
		return p.Name()
	}
	sig, _ := fn.Type().(*types.Signature)
	if sig != nil && sig.Recv() != nil {
		return "(" + types.TypeString(sig.Recv().Type(), qual) + ")." + fn.Name()
	}
	if fn.Pkg() == nil || fn.Pkg() == st.pass.Pkg {
		return fn.Name()
	}
	return fn.Pkg().Name() + "." + fn.Name()
}

// closureOf returns the function literal e denotes: a literal, possibly
// converted to a named function type (backoff.Operation(func() ...)), or a
// local variable assigned exactly once, from a function literal.
func (st *state) closureOf(e ast.Expr) *ast.FuncLit {
	e = ast.Unparen(e)
	switch x := e.(type) {
	case *ast.FuncLit:
		return x
	case *ast.CallExpr:
		if tv, ok := st.pass.TypesInfo.Types[x.Fun]; ok && tv.IsType() && len(x.Args) == 1 {
			return st.closureOf(x.Args[0])
		}
		return nil
	case *ast.Ident:
		v, ok := st.pass.TypesInfo.Uses[x].(*types.Var)
		if !ok {
			return nil
		}
		return st.closures[v]
	}
	return nil
}

// litInfo returns what a function literal sends through, or nil.
func (st *state) litInfo(lit *ast.FuncLit) *sendInfo {
	if si, ok := st.litSends[lit]; ok {
		return si
	}
	st.litSends[lit] = nil // break cycles
	fb := st.bodies[lit.Body]
	if fb == nil {
		return nil
	}
	for _, call := range fb.calls {
		if s, ok := st.sendOf(call); ok {
			si := &sendInfo{via: s.info.via, kind: s.info.kind}
			st.litSends[lit] = si
			return si
		}
	}
	return nil
}

// mayReturn reports whether a call may return, for the control-flow graph:
// panic, os.Exit, runtime.Goexit, log.Fatal* and log.Panic* (also of a
// *log.Logger), and the Fatal, FailNow and Skip methods of testing.T, B, F
// and TB do not.
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
		"testing.common.Skip", "testing.common.Skipf", "testing.common.SkipNow",
		"testing.TB.Fatal", "testing.TB.Fatalf", "testing.TB.FailNow",
		"testing.TB.Skip", "testing.TB.Skipf", "testing.TB.SkipNow":
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

// objectOf returns the object an identifier or qualified identifier
// denotes.
func (st *state) objectOf(e ast.Expr) types.Object {
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		return st.pass.TypesInfo.Uses[x]
	case *ast.SelectorExpr:
		return st.pass.TypesInfo.Uses[x.Sel]
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
	obj, ok := st.objectOf(e).(*types.Var)
	if !ok || obj.Pkg() == nil {
		return false
	}
	switch obj.Pkg().Path() + "." + obj.Name() {
	case natsPath + ".ErrNoResponders", jetstreamPath + ".ErrNoStreamResponse", natsPath + ".ErrMaxPayload",
		shimPath + ".ErrPayloadTooLarge", claimcheckPath + ".ErrTooLarge",
		claimcheckPath + ".ErrNotPublished", claimcheckPath + ".ErrClosed":
		return true
	}
	return false
}

func (st *state) isNil(e ast.Expr) bool {
	return st.pass.TypesInfo.Types[e].IsNil()
}

// classifyOf reports whether e is shim.Classify(carrier).
func (st *state) classifyOf(c carrier, e ast.Expr) bool {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	return ok && len(call.Args) == 1 && funcKey(st.calleeFunc(call)) == shimPath+".Classify" && st.is(c, call.Args[0])
}

// outcome returns the labels of "shim.Classify(err) == e" being true, if e
// is one of the shim.Outcome constants.
func (st *state) outcome(e ast.Expr) (labels, bool) {
	obj, ok := st.objectOf(e).(*types.Const)
	if !ok || obj.Pkg() == nil || obj.Pkg().Path() != shimPath {
		return 0, false
	}
	switch obj.Name() {
	case "OutcomeOK":
		return one(labelSuccess), true
	case "OutcomeNotRun", "OutcomeRejected":
		return one(labelSafe), true
	case "OutcomeUnknown":
		return one(labelFailure), true
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
	case *ast.Ident:
		// ok := err == nil; if ok { ... }
		if v, ok := st.pass.TypesInfo.Uses[e].(*types.Var); ok && st.assigned[v] == 1 {
			if def := st.boolDefs[v]; def != nil {
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
		switch fn := st.calleeFunc(e); funcKey(fn) {
		case "errors.Is":
			if len(e.Args) == 2 && st.nothingSent(e.Args[1]) {
				return one(labelSafe), none
			}
		case shimPath + ".MayHaveRun":
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

// transforms reports whether node is "err = f(..., err, ...)": the error
// passed through a function that keeps nil nil (a wrapper such as
// wrap(err)), so that later tests still tell the send's outcome.
// fmt.Errorf and errors.New never return nil and do not count.
func (st *state) transforms(node ast.Node, c carrier) bool {
	as, ok := node.(*ast.AssignStmt)
	if !ok || c.v == nil || len(as.Lhs) != 1 || len(as.Rhs) != 1 || as.Tok != token.ASSIGN {
		return false
	}
	call, ok := ast.Unparen(as.Rhs[0]).(*ast.CallExpr)
	if !ok {
		return false
	}
	switch funcKey(st.calleeFunc(call)) {
	case "fmt.Errorf", "errors.New", "errors.Join":
		return false
	}
	for _, a := range call.Args {
		if st.is(c, a) {
			return true
		}
	}
	return false
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

// maxDeps bounds the variables tracked for one send.
const maxDeps = 64

// deps are the local variables the arguments (and receiver) of one send
// depend on, directly or through assignments, indexed for a bit mask, with
// the effects of the nodes of the control-flow graph on them.
type deps struct {
	st      *state
	index   map[*types.Var]int
	direct  uint64 // the variables the call itself mentions
	nondet  bool   // the arguments may differ on each evaluation (a receive, a method call...)
	effects map[ast.Node][]effect
}

// effect is one change to a tracked variable made by a node.
type effect struct {
	bit     uint64
	full    bool   // the whole variable is assigned (not a field or element)
	changed bool   // the new value differs from the old one whatever the inputs
	inputs  uint64 // the tracked variables the new value is computed from
}

// localVar returns the local variable e (an identifier) denotes, or nil.
func (st *state) localVar(e ast.Expr) *types.Var {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return nil
	}
	v, ok := st.pass.TypesInfo.ObjectOf(id).(*types.Var)
	if !ok || v.IsField() || v.Pkg() == nil || v.Parent() == v.Pkg().Scope() || v.Parent() == nil {
		return nil
	}
	return v
}

// rootVar returns the local variable an assignment target is rooted in
// (x, x.f, x[i], *x), and whether the target is the whole variable.
func (st *state) rootVar(e ast.Expr) (*types.Var, bool) {
	full := true
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.SelectorExpr:
			e, full = x.X, false
			continue
		case *ast.IndexExpr:
			e, full = x.X, false
			continue
		case *ast.StarExpr:
			e, full = x.X, false
			continue
		}
		return st.localVar(e), full
	}
}

// varsIn calls f for each local variable mentioned in e, function literal
// bodies included, except those declared inside e itself.
func (st *state) varsIn(e ast.Node, f func(*types.Var)) {
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			if v := st.localVar(id); v != nil && (v.Pos() < e.Pos() || v.Pos() >= e.End()) {
				f(v)
			}
		}
		return true
	})
}

// nondet reports whether evaluating e twice may give different values: it
// receives from a channel, calls a method, a function value or a function
// without arguments (other than pure ones such as context.Background). A
// function called with arguments is taken to depend on them only.
func (st *state) nondet(e ast.Expr) bool {
	info := st.pass.TypesInfo
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				found = true
			}
		case *ast.CallExpr:
			if tv, ok := info.Types[n.Fun]; ok && (tv.IsType() || tv.IsBuiltin()) {
				return true
			}
			fn := st.calleeFunc(n)
			if fn == nil {
				found = true
				return false
			}
			key := funcKey(fn)
			if pureFunc(key) || key == "context.Background" || key == "context.TODO" {
				return true
			}
			if sig, _ := fn.Type().(*types.Signature); sig == nil || sig.Recv() != nil || len(n.Args) == 0 {
				found = true
				return false
			}
		}
		return true
	})
	return found
}

// isMsgIDOption reports whether e is jetstream.WithMsgID(...) or
// nats.MsgId(...): a message ID is judged by fixedMsgID, not as part of
// what is sent.
func (st *state) isMsgIDOption(e ast.Expr) bool {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return false
	}
	switch funcKey(st.calleeFunc(call)) {
	case jetstreamPath + ".WithMsgID", natsPath + ".MsgId":
		return true
	}
	return false
}

// assignNodes returns the assignments of a function body, outside function
// literals.
func (fb *fnBody) assignNodes() []ast.Node {
	if fb.assigns == nil {
		fb.assigns = []ast.Node{}
		ast.Inspect(fb.body, func(n ast.Node) bool {
			switch n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.AssignStmt, *ast.ValueSpec:
				fb.assigns = append(fb.assigns, n)
			}
			return true
		})
	}
	return fb.assigns
}

// depsOf computes the variables the send call depends on in body fb.
func (st *state) depsOf(fb *fnBody, call *ast.CallExpr) *deps {
	d := &deps{st: st, index: make(map[*types.Var]int), effects: make(map[ast.Node][]effect)}
	add := func(v *types.Var) {
		if _, ok := d.index[v]; !ok {
			d.index[v] = len(d.index)
		}
	}
	var parts []ast.Node
	switch fun := ast.Unparen(call.Fun).(type) {
	case *ast.SelectorExpr:
		if st.pass.TypesInfo.Selections[fun] != nil {
			parts = append(parts, fun.X)
			d.nondet = d.nondet || st.nondet(fun.X)
		}
	default:
		parts = append(parts, fun)
	}
	for _, a := range call.Args {
		if st.isMsgIDOption(a) {
			continue
		}
		parts = append(parts, a)
		d.nondet = d.nondet || st.nondet(a)
	}
	for _, p := range parts {
		st.varsIn(p, add)
	}
	for _, i := range d.index {
		d.direct |= 1 << i
	}
	// Close over the assignments to those variables.
	for changed := true; changed && !d.nondet; {
		n := len(d.index)
		for _, node := range fb.assignNodes() {
			switch a := node.(type) {
			case *ast.AssignStmt:
				for i, l := range a.Lhs {
					if v, _ := st.rootVar(l); v != nil {
						if _, ok := d.index[v]; ok {
							if len(a.Rhs) == len(a.Lhs) {
								st.varsIn(a.Rhs[i], add)
							} else {
								st.varsIn(a.Rhs[0], add)
							}
						}
					}
				}
			case *ast.ValueSpec:
				for i, name := range a.Names {
					if v := st.localVar(name); v != nil && i < len(a.Values) {
						if _, ok := d.index[v]; ok {
							st.varsIn(a.Values[i], add)
						}
					}
				}
			}
		}
		changed = len(d.index) > n
		if len(d.index) > maxDeps {
			d.nondet = true
		}
	}
	return d
}

// bit returns the mask bit of a tracked variable, or 0.
func (d *deps) bit(v *types.Var) uint64 {
	if v == nil {
		return 0
	}
	if i, ok := d.index[v]; ok {
		return 1 << i
	}
	return 0
}

// mask returns the bits of the tracked variables mentioned in e.
func (d *deps) mask(e ast.Node) uint64 {
	var m uint64
	d.st.varsIn(e, func(v *types.Var) { m |= d.bit(v) })
	return m
}

// effectsOf returns the effects of a node on the tracked variables.
func (d *deps) effectsOf(node ast.Node) []effect {
	if es, ok := d.effects[node]; ok {
		return es
	}
	st := d.st
	var es []effect
	assign := func(lhs, rhs ast.Expr, tok token.Token) {
		v, full := st.rootVar(lhs)
		bit := d.bit(v)
		if bit == 0 {
			return
		}
		e := effect{bit: bit, full: full}
		switch {
		case tok != token.ASSIGN && tok != token.DEFINE:
			e.changed = true // x += y
		case rhs == nil:
			// var x T: the zero value
		default:
			e.inputs = d.mask(rhs)
			e.changed = st.nondet(rhs) || e.inputs&bit != 0
		}
		es = append(es, e)
	}
	ast.Inspect(node, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				switch {
				case len(n.Rhs) == len(n.Lhs):
					assign(l, n.Rhs[i], n.Tok)
				case len(n.Rhs) == 1:
					assign(l, n.Rhs[0], n.Tok)
				}
			}
		case *ast.ValueSpec:
			for i, name := range n.Names {
				var rhs ast.Expr
				if i < len(n.Values) {
					rhs = n.Values[i]
				} else if len(n.Values) == 1 {
					rhs = n.Values[0]
				}
				assign(name, rhs, token.DEFINE)
			}
		case *ast.IncDecStmt:
			if v, full := st.rootVar(n.X); d.bit(v) != 0 {
				es = append(es, effect{bit: d.bit(v), full: full, changed: true})
			}
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				if v, _ := st.rootVar(n.X); d.bit(v) != 0 {
					// Its address escapes: it may change anywhere.
					es = append(es, effect{bit: d.bit(v), changed: true})
				}
			}
		}
		return true
	})
	d.effects[node] = es
	return es
}

// apply returns the dirty mask after node runs: a tracked variable is
// dirty when its value may differ from the one the send used.
func (d *deps) apply(node ast.Node, dirty uint64) uint64 {
	if len(d.index) == 0 {
		return dirty
	}
	for _, e := range d.effectsOf(node) {
		now := e.changed || e.inputs&dirty != 0
		switch {
		case now:
			dirty |= e.bit
		case e.full:
			dirty &^= e.bit
		}
	}
	return dirty
}

// rangeDirty returns the dirty mask after the header of a range loop
// assigns its key and value.
func (d *deps) rangeDirty(b *cfg.Block, dirty uint64) uint64 {
	if r, ok := b.Stmt.(*ast.RangeStmt); ok && b.Kind == cfg.KindRangeLoop {
		for _, e := range []ast.Expr{r.Key, r.Value} {
			if e != nil {
				v, _ := d.st.rootVar(e)
				dirty |= d.bit(v)
			}
		}
	}
	return dirty
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
	locs := st.locate(g, fb.body, sends)
	caseTag := caseTags(fb.body)
	for j, s := range sends {
		l := locs[j]
		if l.b == nil {
			continue
		}
		c, ok := st.carrierOf(l.b.Nodes[l.i], s.call)
		if !ok {
			continue
		}
		d := st.depsOf(fb, s.call)
		r := st.retryPaths(g, l.b, l.i, c, fb.self, caseTag, d, nil)
		// The failure path reaches the send again while no path on which
		// the error may be nil does (a path that reaches the send without
		// testing the error may be a success path too)...
		anyFail := r.reached[labelFailure][0] || r.reached[labelFailure][1]
		anyOK := r.reached[labelSuccess][0] || r.reached[labelSuccess][1] || r.reached[labelNone][0] || r.reached[labelNone][1]
		loose := anyFail && !anyOK
		// ... or the failure path reaches it again with the same
		// arguments while the paths on which the error may be nil only
		// reach it with others: a retry nested in a loop over items.
		same := !d.nondet && r.reached[labelFailure][0] && !r.reached[labelSuccess][0] && !r.reached[labelNone][0]
		if !loose && !same {
			continue
		}
		if s.info.js && st.fixedMsgID(s.call, r.region(l.b, same), nil) {
			continue
		}
		how := "is retried on failure"
		if r.recursed && !same {
			how = fmt.Sprintf("is retried on failure by calling %s again", fb.self.Name())
		}
		st.addRetry(s.call, s.info.via, fmt.Sprintf("%s %s: %s", s.subject(), how, retryAdvice(s.info.kind)))
	}
}

// loc is the position of a send in a control-flow graph: block and node
// index.
type loc struct {
	b *cfg.Block
	i int
}

// locate finds the block and node of each send in g.
func (st *state) locate(g *cfg.CFG, body *ast.BlockStmt, sends []sendSite) []loc {
	want := make(map[*ast.CallExpr]int, len(sends))
	for i, s := range sends {
		want[s.call] = i
	}
	locs := make([]loc, len(sends))
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
					if j, ok := want[n]; ok && locs[j].b == nil {
						locs[j] = loc{b, i}
					}
				}
				return true
			})
		}
	}
	return locs
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

// pathState is a point of the search of retryPaths: a block entered with
// the label of the path so far, whether the carrier still holds the send's
// error, and which tracked variables changed since the send.
type pathState struct {
	b     *cfg.Block
	l     label
	valid bool
	dirty uint64
}

// pathResult is what retryPaths found.
type pathResult struct {
	// reached tells which labels the paths carry when they reach the
	// send again: [label][0] with the same arguments, [label][1] with
	// others (or through recursion).
	reached  [numLabels][2]bool
	recursed bool
	states   []pathState
	preds    [][]int
	arrivals []arrival
}

// arrival is a path reaching the send again from a state.
type arrival struct {
	from int
	l    label
	same bool
}

// region returns the nodes that run again on the failure paths back to the
// send in block start (only those with the same arguments if same): the
// nodes of the blocks on those paths, with the key and value of range
// loops among them.
func (r *pathResult) region(start *cfg.Block, same bool) []ast.Node {
	on := make([]bool, len(r.states))
	var work []int
	for _, a := range r.arrivals {
		if a.l == labelFailure && (a.same || !same) && !on[a.from] {
			on[a.from] = true
			work = append(work, a.from)
		}
	}
	for len(work) > 0 {
		n := work[len(work)-1]
		work = work[:len(work)-1]
		for _, p := range r.preds[n] {
			if !on[p] {
				on[p] = true
				work = append(work, p)
			}
		}
	}
	blocks := map[*cfg.Block]bool{start: true}
	nodes := append([]ast.Node(nil), start.Nodes...)
	for i, s := range r.states {
		if !on[i] || blocks[s.b] {
			continue
		}
		blocks[s.b] = true
		nodes = append(nodes, s.b.Nodes...)
		if rs, ok := s.b.Stmt.(*ast.RangeStmt); ok && s.b.Kind == cfg.KindRangeLoop {
			nodes = append(nodes, &ast.AssignStmt{Lhs: nonNil(rs.Key, rs.Value), Tok: token.ASSIGN})
		}
	}
	return nodes
}

// maxStates bounds the search of retryPaths for one send.
const maxStates = 20000

// retryPaths follows the paths from the send in node i of block start and
// reports which labels the paths carry when they reach the send again, or a
// recursive call of self. If onReturn is not nil, it is called for each
// return statement a path reaches, which ends the path.
func (st *state) retryPaths(g *cfg.CFG, start *cfg.Block, i int, c carrier, self *types.Func, caseTag map[ast.Expr]ast.Expr, d *deps, onReturn func(*ast.ReturnStmt, label, bool)) *pathResult {
	r := &pathResult{}
	seen := make(map[pathState]int)
	var queue []int
	newState := func(s pathState) int {
		r.states = append(r.states, s)
		r.preds = append(r.preds, nil)
		return len(r.states) - 1
	}
	push := func(from int, b *cfg.Block, l label, valid bool, dirty uint64) {
		if b == start {
			// The nodes before the send in its block run first.
			for k := 0; k < i; k++ {
				dirty = d.apply(b.Nodes[k], dirty)
			}
			same := dirty&d.direct == 0
			if same {
				r.reached[l][0] = true
			} else {
				r.reached[l][1] = true
			}
			r.arrivals = append(r.arrivals, arrival{from, l, same})
			return
		}
		s := pathState{b, l, valid, dirty}
		n, ok := seen[s]
		if !ok {
			if len(r.states) >= maxStates {
				return
			}
			n = newState(s)
			seen[s] = n
			queue = append(queue, n)
		}
		r.preds[n] = append(r.preds[n], from)
	}
	walk := func(n int, from int) {
		s := r.states[n]
		b, l, valid, dirty := s.b, s.l, s.valid, s.dirty
		for k := from; k < len(b.Nodes); k++ {
			node := b.Nodes[k]
			if k == i && b == start {
				if ret, ok := node.(*ast.ReturnStmt); ok && onReturn != nil {
					onReturn(ret, l, valid) // return send()
					return
				}
				continue
			}
			if st.callsFunc(node, self) {
				r.reached[l][1] = true
				r.recursed = true
				return
			}
			if ret, ok := node.(*ast.ReturnStmt); ok && onReturn != nil {
				onReturn(ret, l, valid)
				return
			}
			if st.assigns(node, c.v) && !st.transforms(node, c) {
				valid = false
			}
			dirty = d.apply(node, dirty)
		}
		dirty = d.rangeDirty(b, dirty)
		if b.Kind == cfg.KindRangeLoop && c.v != nil {
			if rs, ok := b.Stmt.(*ast.RangeStmt); ok && (st.assigns(&ast.AssignStmt{Lhs: nonNil(rs.Key, rs.Value)}, c.v)) {
				valid = false
			}
		}
		if len(b.Succs) == 2 && len(b.Nodes) > 0 && b.Kind != cfg.KindRangeLoop {
			t, f := one(labelNone), one(labelNone)
			if e, ok := b.Nodes[len(b.Nodes)-1].(ast.Expr); ok && valid && (l == labelNone || l == labelFailure) {
				if tag, ok := caseTag[e]; ok {
					t, f = st.compare(c, tag, e, true)
				} else {
					t, f = st.cond(c, e)
				}
			}
			for _, edge := range []struct {
				b  *cfg.Block
				ls labels
			}{{b.Succs[0], refine(l, t)}, {b.Succs[1], refine(l, f)}} {
				for nl := labelNone; nl < numLabels; nl++ {
					if edge.ls&one(nl) != 0 {
						push(n, edge.b, nl, valid, dirty)
					}
				}
			}
			return
		}
		for _, succ := range b.Succs {
			push(n, succ, l, valid, dirty)
		}
	}
	first := newState(pathState{start, labelNone, true, 0})
	walk(first, i)
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		walk(n, 0)
	}
	return r
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
	key  string // e.g. "github.com/cenkalti/backoff/v4.Retry"
	name string // e.g. "backoff.Retry"
}

// helperKind says when a retry helper calls its function again.
type helperKind uint8

const (
	helperAlways   helperKind = iota // not known: every send inside counts
	helperOnError                    // on any error except one marked permanent
	helperOnMarked                   // only on an error marked retryable
)

// helperKindOf returns how the helper with the given funcKey retries, and
// the functions that mark an error permanent (helperOnError) or retryable
// (helperOnMarked).
func helperKindOf(key string) (helperKind, []string) {
	pkg, _, _ := splitHelper(key)
	switch pkg {
	case "github.com/cenkalti/backoff/v4", "github.com/cenkalti/backoff/v5":
		return helperOnError, []string{pkg + ".Permanent"}
	case "github.com/avast/retry-go", "github.com/avast/retry-go/v4":
		return helperOnError, []string{pkg + ".Unrecoverable"}
	case "k8s.io/client-go/util/retry":
		return helperOnError, nil
	case "github.com/sethvargo/go-retry":
		return helperOnMarked, []string{pkg + ".RetryableError"}
	}
	return helperAlways, nil
}

// checkHelper reports the sends retried by a call of a retry helper: a send
// inside a function literal passed to it (directly, converted to a function
// type, or through a variable) whose failure makes the literal ask for
// another attempt, or the call itself when a named function that sends is
// passed.
func (st *state) checkHelper(h helperCall) {
	kind, markers := helperKindOf(h.key)
	for _, arg := range h.call.Args {
		if lit := st.closureOf(arg); lit != nil {
			fb := st.bodies[lit.Body]
			if fb == nil {
				continue
			}
			var g *cfg.CFG
			for _, call := range fb.calls {
				s, ok := st.sendOf(call)
				if !ok || (s.info.js && st.fixedMsgID(call, []ast.Node{lit.Body}, lit)) {
					continue
				}
				if kind != helperAlways {
					if g == nil {
						g = cfg.New(lit.Body, st.mayReturn)
					}
					if !st.retriedByHelper(g, lit, fb, s, kind, markers) {
						continue
					}
				}
				st.addRetry(call, s.info.via, fmt.Sprintf("%s is retried on failure by %s: %s", s.subject(), h.name, retryAdvice(s.info.kind)))
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
			if si, ok := st.sendVia(fn); ok {
				st.addRetry(h.call, si.via, fmt.Sprintf("%s retries %s, which sends through %s: %s", h.name, fn.Name(), si.via, retryAdvice(si.kind)))
			}
		}
	}
}

// retriedByHelper reports whether a path from send s in the function
// literal returns an error that makes the helper try again: for
// helperOnError a non-nil error not wrapped by a permanent marker
// (backoff.Permanent, retry.Unrecoverable), for helperOnMarked one wrapped
// by the retryable marker (retry.RetryableError). Returning the send's
// own error on a path where it is nil, or means nothing was delivered,
// does not count.
func (st *state) retriedByHelper(g *cfg.CFG, lit *ast.FuncLit, fb *fnBody, s sendSite, kind helperKind, markers []string) bool {
	sig, ok := st.pass.TypesInfo.TypeOf(lit).(*types.Signature)
	if !ok {
		return true
	}
	n := sig.Results().Len()
	if n == 0 || !isErrorType(sig.Results().At(n-1).Type()) {
		return true
	}
	locs := st.locate(g, lit.Body, []sendSite{s})
	if locs[0].b == nil {
		return true
	}
	c, ok := st.carrierOf(locs[0].b.Nodes[locs[0].i], s.call)
	if !ok {
		return true
	}
	isMarker := func(e ast.Expr) (*ast.CallExpr, bool) {
		call, ok := ast.Unparen(e).(*ast.CallExpr)
		if !ok {
			return nil, false
		}
		k := funcKey(st.calleeFunc(call))
		for _, m := range markers {
			if k == m {
				return call, true
			}
		}
		return nil, false
	}
	// own reports whether e is the send's own error, still held.
	own := func(e ast.Expr, valid bool) bool {
		return ast.Unparen(e) == s.call || (valid && st.is(c, e))
	}
	retried := false
	d := &deps{st: st, effects: make(map[ast.Node][]effect)}
	st.retryPaths(g, locs[0].b, locs[0].i, c, nil, caseTags(lit.Body), d, func(ret *ast.ReturnStmt, l label, valid bool) {
		var e ast.Expr
		switch {
		case len(ret.Results) == n:
			e = ret.Results[n-1]
		case len(ret.Results) == 1:
			e = ret.Results[0] // return f() with f's results
		default:
			retried = retried || kind == helperOnError // a bare return: unknown
			return
		}
		harmless := l == labelSuccess || l == labelSafe
		switch {
		case st.isNil(e):
		case kind == helperOnError:
			if _, ok := isMarker(e); ok {
				return
			}
			if own(e, valid) && harmless {
				return
			}
			retried = true
		case kind == helperOnMarked:
			if m, ok := isMarker(e); ok && len(m.Args) == 1 {
				if own(m.Args[0], valid) && harmless {
					return
				}
				retried = true
			}
		}
	})
	return retried
}
