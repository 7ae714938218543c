package analyzer

import (
	"go/ast"
	"go/types"
	"slices"

	"golang.org/x/tools/go/analysis"
)

// recvCheck is the receiver check of one pass: receive paths that read a
// message's body without resolving claim checks, in a package where claim
// checks are in use. It runs after the scan, on its own walk, and only
// when claimsInUse says so, so a package without claim checks pays
// nothing for it.
type recvCheck struct {
	pass  *analysis.Pass
	info  *types.Info
	rep   *reporter
	decls map[*types.Func]*ast.FuncDecl
	// lits are local variables assigned a function literal once
	// (cb := func(m *nats.Msg) {...}); multi those assigned more often.
	lits  map[*types.Var]*ast.FuncLit
	multi map[*types.Var]bool
	// values are all the values assigned to each local variable (nil
	// for one assigned by a call with several results, or in a way not
	// seen), for handlers held in a variable assigned more than once.
	values map[*types.Var][]ast.Expr
	memo   map[recvKey]*recvUse
	// inbox says, for a variable or field, whether every value stored
	// to it is an inbox (nats.NewInbox(), nc.NewRespInbox()).
	inbox map[*types.Var]bool
	// server marks those a server subject ("$JS.EVENT...") is stored to.
	server map[*types.Var]bool
	// subs are the variables assigned a synchronous subscription once,
	// with the call that made it.
	subs map[*types.Var]*ast.CallExpr
	// chans memoizes chanUse: what the package does with the messages
	// received from a channel.
	chans map[*types.Var]*recvUse
}

// recvKey is a function read with one of its parameters tracked (index
// -1: the receiver).
type recvKey struct {
	decl  *ast.FuncDecl
	param int
}

// recvUse is what a body does with the tracked message.
type recvUse struct {
	reads    bool // reads its body (m.Data, msg.Data(), req.Data())
	resolves bool // resolves or recognises claim checks
	// unfollowed says where the message went that the check cannot
	// read (receivefollow.go), if anywhere.
	unfollowed string
}

func (u *recvUse) merge(o *recvUse) {
	u.reads = u.reads || o.reads
	u.resolves = u.resolves || o.resolves
	if u.unfollowed == "" {
		u.unfollowed = o.unfollowed
	}
}

// recvSite is one call of a receive path.
type recvSite struct {
	call  *ast.CallExpr
	api   receiveAPI
	outer *ast.FuncDecl // the function declaration around the call
	micro bool          // a micro.HandlerFunc conversion
}

// claimsInUse reports whether claim checks are in use in the package: the
// setting says so for the whole module, or the package imports claimcheck
// or calls shim.WithClaimChecks or shim.ServeClaimChecks.
func claimsInUse(pass *analysis.Pass, set *settings) bool {
	if set.claimChecks {
		return true
	}
	if importsPath(pass.Pkg, claimcheckPath) {
		return true
	}
	if !importsPath(pass.Pkg, shimPath) {
		return false
	}
	for _, obj := range pass.TypesInfo.Uses {
		if fn, ok := obj.(*types.Func); ok && claimUseFuncs[funcKey(fn)] {
			return true
		}
	}
	return false
}

// checkReceivers reports the receive paths of the package that read a
// message without resolving claim checks.
func (st *state) checkReceivers() {
	if !st.rep.set.enabled[CategoryReceiver] || st.rep.exempt || !claimsInUse(st.pass, st.set) {
		return
	}
	c := &recvCheck{
		pass: st.pass, info: st.info, rep: st.rep,
		decls:  make(map[*types.Func]*ast.FuncDecl),
		lits:   make(map[*types.Var]*ast.FuncLit),
		multi:  make(map[*types.Var]bool),
		values: make(map[*types.Var][]ast.Expr),
		memo:   make(map[recvKey]*recvUse),
		inbox:  make(map[*types.Var]bool),
		subs:   make(map[*types.Var]*ast.CallExpr),

		server: make(map[*types.Var]bool),
	}
	var sites []recvSite
	for _, f := range st.pass.Files {
		var outer *ast.FuncDecl
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				outer = n
				if fn, ok := c.info.Defs[n.Name].(*types.Func); ok && n.Body != nil {
					c.decls[fn] = n
				}
			case *ast.AssignStmt:
				c.noteLits(n.Lhs, n.Rhs)
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok {
					if v, ok := c.info.ObjectOf(id).(*types.Var); ok && v.IsField() {
						c.noteInbox(id, n.Value)
					}
				}
			case *ast.ValueSpec:
				lhs := make([]ast.Expr, len(n.Names))
				for i, id := range n.Names {
					lhs[i] = id
				}
				c.noteLits(lhs, n.Values)
			case *ast.CallExpr:
				if s, ok := c.site(n, outer); ok {
					sites = append(sites, s)
				}
			}
			return true
		})
	}
	for _, s := range sites {
		c.judge(s)
	}
}

// noteLits records local variables assigned a function literal.
func (c *recvCheck) noteLits(lhs, rhs []ast.Expr) {
	for i, l := range lhs {
		c.noteInbox(l, exprAt(rhs, i, len(lhs)))
		id, ok := l.(*ast.Ident)
		if !ok {
			continue
		}
		v, _ := c.info.ObjectOf(id).(*types.Var)
		if v == nil {
			continue
		}
		val := exprAt(rhs, i, len(lhs))
		c.values[v] = append(c.values[v], val)
		lit, _ := ast.Unparen(val).(*ast.FuncLit)
		if _, seen := c.lits[v]; seen || c.multi[v] || lit == nil {
			c.multi[v] = true
			delete(c.lits, v)
			continue
		}
		c.lits[v] = lit
	}
}

// exprAt returns the expression assigned to the i-th of n left-hand
// sides: for a call with several results (sub, err := f()), the call
// stands for its first.
func exprAt(rhs []ast.Expr, i, n int) ast.Expr {
	switch {
	case len(rhs) == n:
		return rhs[i]
	case len(rhs) == 1 && i == 0:
		return rhs[0]
	}
	return nil
}

// site returns the receive site of call, if it is one.
func (c *recvCheck) site(call *ast.CallExpr, outer *ast.FuncDecl) (recvSite, bool) {
	if tv, ok := c.info.Types[call.Fun]; ok && tv.IsType() {
		if len(call.Args) == 1 && isNamed(tv.Type, microPath, "HandlerFunc") {
			return recvSite{call: call, api: receiveAPI{display: "micro.HandlerFunc", arg: 0, chanArg: -1, subject: -1, advice: adviceMicro}, outer: outer, micro: true}, true
		}
		return recvSite{}, false
	}
	fn := calleeFunc(c.info, call)
	if fn == nil {
		return recvSite{}, false
	}
	api, ok := receiveAPIs[funcKey(fn)]
	if !ok {
		return recvSite{}, false
	}
	return recvSite{call: call, api: api, outer: outer, micro: fn.Pkg() != nil && fn.Pkg().Path() == microPath}, true
}

// judge reports the site if the message it hands over is read and claim
// checks are not resolved on the way.
func (c *recvCheck) judge(s recvSite) {
	var use *recvUse
	why := ""
	switch {
	case s.api.arg >= 0:
		if s.api.arg >= len(s.call.Args) {
			return
		}
		var hs []handlerBody
		hs, why = c.handlers(s.call.Args[s.api.arg])
		for _, h := range hs {
			// Each value the callback may hold is a handler of its own:
			// one that reads without resolving is reported.
			u := c.body(h.body, []*types.Var{h.param})
			if use == nil || u.reads && !u.resolves {
				use = u
			}
			if why == "" {
				why = u.unfollowed
			}
		}
	case s.outer != nil:
		var start []*types.Var
		if s.api.chanArg >= 0 && s.api.chanArg < len(s.call.Args) {
			arg := s.call.Args[s.api.chanArg]
			if v := chanVar(c.info, arg); v == nil || v.IsField() || localVar(c.info, arg) == nil {
				// A field (s.msgs), a package variable: read where the
				// package receives from it.
				use, why = c.fieldChan(arg)
				break
			}
			start = c.vars(arg)
		} else {
			start = c.results(s.outer.Body, s.call)
		}
		if len(start) == 0 {
			return
		}
		use = c.body(s.outer.Body, start)
		why = use.unfollowed
		if s.api.chanArg >= 0 && why == "" && !use.reads && !use.resolves && len(c.chanReceives(s.outer.Body, start[0])) == 0 {
			why = "its channel " + start[0].Name() + " leaves the function unread"
		}
	}
	if use == nil || !use.reads || use.resolves {
		if why != "" && (use == nil || !use.resolves) && !c.noClaimChecks(s) {
			c.rep.auditEntry(s.call, CategoryUnjudged, "raw "+s.api.display+": "+why)
		}
		return
	}
	if c.noClaimChecks(s) {
		return
	}
	what := "raw " + s.api.display + " callback reads the message"
	switch {
	case s.micro:
		what = s.api.display + " handler reads the request"
	case s.api.arg < 0:
		what = "raw " + s.api.display + ": the message it hands over is read"
	}
	f := &finding{
		category: CategoryReceiver,
		pos:      s.call.Pos(),
		end:      s.call.End(),
		api:      "raw " + s.api.display,
		report:   true,
		message:  what + " without resolving claim checks, which are in use here: a claim-checked message arrives with an empty body; " + s.api.advice + " (receivers first, then senders: docs/checks.md#receiver)",
	}
	if s.api.fix != "" {
		f.fix = func() []analysis.SuggestedFix { return c.fix(s) }
	}
	c.rep.add(f)
}

// msgParam returns the parameter of ft that holds a received message.
func (c *recvCheck) msgParam(ft *ast.FuncType) *types.Var {
	for _, field := range ft.Params.List {
		for _, name := range field.Names {
			if v, ok := c.info.Defs[name].(*types.Var); ok && isMessage(v.Type()) {
				return v
			}
		}
	}
	return nil
}

// isMessage reports whether t is a received message: *nats.Msg,
// jetstream.Msg or micro.Request.
func isMessage(t types.Type) bool {
	return isNamed(t, natsPath, msgType) || isNamed(t, jetstreamPath, msgType) || isNamed(t, microPath, "Request")
}

// vars returns the local variables e names.
func (c *recvCheck) vars(e ast.Expr) []*types.Var {
	var vs []*types.Var
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			if v, ok := c.info.ObjectOf(id).(*types.Var); ok && !v.IsField() {
				vs = append(vs, v)
			}
		}
		return true
	})
	return vs
}

// results returns the variables the call's results are assigned to in
// body (msg, err := sub.NextMsg(d); batch, err := cons.Fetch(10)).
func (c *recvCheck) results(body *ast.BlockStmt, call *ast.CallExpr) []*types.Var {
	var vs []*types.Var
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if slices.Contains(n.Rhs, ast.Expr(call)) && len(n.Lhs) > 0 {
				vs = c.vars(n.Lhs[0])
			}
		case *ast.ValueSpec:
			if slices.Contains(n.Values, ast.Expr(call)) && len(n.Names) > 0 {
				vs = c.vars(n.Names[0])
			}
		}
		return vs == nil
	})
	return vs
}
