package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/cfg"
)

// maxDeps bounds the variables tracked for one send.
const maxDeps = 64

// deps are the local variables the arguments (and receiver) of one send
// depend on, directly or through assignments, indexed for a bit mask, with
// the effects of the nodes of the control-flow graph on them.
type deps struct {
	info   *types.Info
	idx    *assignIndex // the body's; nil when no variable is tracked
	index  map[*types.Var]int
	direct uint64 // the variables the call's body mentions
	body   uint64 // direct and the variables they are computed from
	target uint64 // the variables its target (receiver, subject) mentions
	// targetFrom: the variables the target's are computed from (b in
	// nc := b.nc), as body is for direct
	targetFrom uint64
	// targetNondet: the target may differ on each evaluation
	targetNondet bool
	nondet       bool // the arguments may differ on each evaluation (a receive, a method call...)
	effects      map[ast.Node][]effect
}

// effect is one change to a tracked variable made by a node.
type effect struct {
	bit     uint64
	full    bool   // the whole variable is assigned (not a field or element)
	changed bool   // the new value differs from the old one whatever the inputs
	inputs  uint64 // the tracked variables the new value is computed from
}

// localVar returns the local variable e (an identifier) denotes, or nil.
func localVar(info *types.Info, e ast.Expr) *types.Var {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return nil
	}
	v, ok := info.ObjectOf(id).(*types.Var)
	if !ok || v.IsField() || v.Pkg() == nil || v.Parent() == v.Pkg().Scope() || v.Parent() == nil {
		return nil
	}
	return v
}

// rootVar returns the local variable an assignment target is rooted in
// (x, x.f, x[i], *x), and whether the target is the whole variable.
func rootVar(info *types.Info, e ast.Expr) (*types.Var, bool) {
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
		return localVar(info, e), full
	}
}

// nondet reports whether evaluating e twice may give different values: it
// receives from a channel, calls a method, a function value or a function
// without arguments (other than pure ones such as context.Background). A
// function called with arguments is taken to depend on them only.
func nondet(info *types.Info, e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.KeyValueExpr:
			// A message's header does not make another operation
			// (see dataVarsIn).
			if k, ok := n.Key.(*ast.Ident); ok && k.Name == headerField {
				return false
			}
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				found = true
			}
		case *ast.CallExpr:
			if tv, ok := info.Types[n.Fun]; ok && (tv.IsType() || tv.IsBuiltin()) {
				return true
			}
			fn := calleeFunc(info, n)
			if fn == nil {
				found = true
				return false
			}
			key := funcKey(fn)
			if pureFunc(key) {
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
func isMsgIDOption(info *types.Info, e ast.Expr) bool {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return false
	}
	switch funcKey(calleeFunc(info, call)) {
	case msgIDOptionFuncs[0], msgIDOptionFuncs[1]:
		return true
	}
	return false
}

// depsOf computes the variables the body of the send call depends on in
// fb: what is sent, not where (bodyParts). The closure over assignments
// skips message headers (see dataVarsIn).
func depsOf(info *types.Info, fb *fnBody, s sendSite) *deps {
	body, targets := bodyParts(info, s)
	return depsFrom(info, fb, body, targets)
}

// depsFrom computes the variables of fb that the expressions body (what
// is sent) and targets (where) depend on.
func depsFrom(info *types.Info, fb *fnBody, body, targets []ast.Expr) *deps {
	d := &deps{info: info, idx: indexOf(fb), index: make(map[*types.Var]int), effects: make(map[ast.Node][]effect)}
	add := func(v *types.Var) {
		if _, ok := d.index[v]; !ok {
			d.index[v] = len(d.index)
		}
	}
	for _, p := range body {
		d.nondet = d.nondet || nondet(info, p)
		dataVarsIn(info, p, add)
	}
	for _, i := range d.index {
		d.direct |= 1 << i
	}
	for _, p := range targets {
		d.targetNondet = d.targetNondet || nondet(info, p)
		dataVarsIn(info, p, func(v *types.Var) {
			add(v)
			d.target |= 1 << d.index[v]
		})
	}
	d.body = d.direct
	// Close over the assignments to those variables.
	for changed := true; changed && !d.nondet; {
		n, body, targetFrom := len(d.index), d.body, d.targetFrom
		from := func(v *types.Var, rhs ast.Expr) {
			inBody := d.bit(v)&d.body != 0
			inTarget := d.bit(v)&(d.target|d.targetFrom) != 0
			dataVarsIn(info, rhs, func(w *types.Var) {
				add(w)
				if inBody && d.index[w] < maxDeps {
					d.body |= d.bit(w)
				}
				if inTarget && d.index[w] < maxDeps {
					d.targetFrom |= d.bit(w)
				}
			})
		}
		for _, a := range d.idx.all {
			if _, ok := d.index[a.v]; !ok || a.inLit {
				continue
			}
			switch n := a.node.(type) {
			case *ast.AssignStmt:
				switch {
				case isHeaderTarget(info, a.lhs):
				case a.rhs != nil:
					from(a.v, a.rhs)
				case a.tuple != nil:
					from(a.v, a.tuple)
				}
			case *ast.ValueSpec:
				switch {
				case a.rhs != nil:
					from(a.v, a.rhs)
				case a.tuple != nil && a.lhs == n.Names[0]:
					from(a.v, a.tuple) // var x, y = f(): x only (y is not followed)
				}
			}
		}
		changed = len(d.index) > n || d.body != body || d.targetFrom != targetFrom
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
	dataVarsIn(d.info, e, func(v *types.Var) { m |= d.bit(v) })
	return m
}

// effectsOf returns the effects of a node on the tracked variables: the
// stores within it (outside function literals) that the body's index has.
func (d *deps) effectsOf(node ast.Node) []effect {
	if es, ok := d.effects[node]; ok {
		return es
	}
	var es []effect
	d.idx.inside(node, func(a *assignment) {
		bit := d.bit(a.v)
		if a.inLit || bit == 0 {
			return
		}
		switch a.node.(type) {
		case *ast.IncDecStmt:
			es = append(es, effect{bit: bit, full: a.whole, changed: true})
			return
		case *ast.UnaryExpr:
			// Its address escapes: it may change anywhere.
			es = append(es, effect{bit: bit, changed: true})
			return
		}
		rhs := a.rhs
		if rhs == nil {
			rhs = a.tuple
		}
		_, spec := a.node.(*ast.ValueSpec)
		if (rhs == nil && !spec) || isHeaderTarget(d.info, a.lhs) {
			return
		}
		e := effect{bit: bit, full: a.whole}
		switch {
		case a.tok != token.ASSIGN && a.tok != token.DEFINE:
			e.changed = true // x += y
		case rhs == nil:
			// var x T: the zero value
		default:
			e.inputs = d.mask(rhs)
			e.changed = nondet(d.info, rhs) || e.inputs&bit != 0
		}
		es = append(es, e)
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
				v, _ := rootVar(d.info, e)
				dirty |= d.bit(v)
			}
		}
	}
	return dirty
}

// rangeRestart returns the dirty mask after the header of a range loop
// entered again from outside its body: over an unchanged sequence, its
// key and value run through the same items again, so a batch restarted
// from its first item sends the failed one again with the same body.
func (d *deps) rangeRestart(b *cfg.Block, dirty uint64) uint64 {
	r, ok := b.Stmt.(*ast.RangeStmt)
	if !ok || b.Kind != cfg.KindRangeLoop {
		return dirty
	}
	if v, ok := rootVar(d.info, r.X); !ok || v == nil || dirty&d.bit(v) != 0 {
		return d.rangeDirty(b, dirty) // another sequence, or not known
	}
	for _, e := range []ast.Expr{r.Key, r.Value} {
		if e != nil {
			v, _ := rootVar(d.info, e)
			dirty &^= d.bit(v)
		}
	}
	return dirty
}

// entersRange reports whether the edge from b to succ enters a range
// loop's header from outside the loop's body.
func entersRange(b, succ *cfg.Block) bool {
	r, ok := succ.Stmt.(*ast.RangeStmt)
	if !ok || succ.Kind != cfg.KindRangeLoop {
		return false
	}
	if n := len(b.Nodes); n > 0 && b.Nodes[n-1] == r.X {
		return true // the block that evaluates the sequence
	}
	var at token.Pos
	switch {
	case len(b.Nodes) > 0:
		at = b.Nodes[0].Pos()
	case b.Stmt != nil:
		at = b.Stmt.Pos()
	default:
		return false
	}
	return at < r.Body.Pos() || at >= r.Body.End()
}

// results returns the bits of the tracked variables the send statement
// node assigns (reply, err := send(...)): they change on every attempt,
// so a cursor computed from the reply is another item.
func (d *deps) results(node ast.Node) uint64 {
	var m uint64
	switch n := node.(type) {
	case *ast.AssignStmt:
		for _, l := range n.Lhs {
			v, _ := rootVar(d.info, l)
			m |= d.bit(v)
		}
	case *ast.DeclStmt:
		if g, ok := n.Decl.(*ast.GenDecl); ok {
			for _, sp := range g.Specs {
				if vs, ok := sp.(*ast.ValueSpec); ok {
					for _, name := range vs.Names {
						m |= d.bit(localVar(d.info, name))
					}
				}
			}
		}
	}
	return m
}
