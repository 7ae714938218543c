package analyzer

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"
)

const doc = `report raw NATS sends, retried sends and buffered reconnects

The natssend analyzer reports NATS sends that bypass the natssend shim
(category rawsend), sends whose failure path leads back to the same send
(category retry), and connections that keep nats.go's outgoing reconnect
buffer (category reconnectbuf). A statement marked
//natssend:reviewed <reason> is not reported for raw sends and
connections; a retry needs a reason starting with "retry:"
(//natssend:reviewed retry: idempotent upsert keyed by order ID).`

// Analyzer is the natssend analysis pass with DefaultConfig. Its Flags set
// the configuration for command-line drivers: -shim-packages,
// -retry-helpers, -categories (comma-separated lists), -skip-tests and
// -audit.
var Analyzer = newDefault()

func newDefault() *analysis.Analyzer {
	a, err := New(DefaultConfig())
	if err != nil {
		// DefaultConfig is a constant of this package, not user input.
		panic("natssend: invalid default configuration: " + err.Error())
	}
	return a
}

// New returns a natssend analyzer for cfg, or an error if cfg does not
// validate. The analyzer's Flags are bound to its own copy of cfg, so a
// command-line driver may still change the settings before it runs.
func New(cfg Config) (*analysis.Analyzer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &checker{cfg: Config{
		ShimPackages: slices.Clone(cfg.ShimPackages),
		RetryHelpers: slices.Clone(cfg.RetryHelpers),
		Categories:   slices.Clone(cfg.Categories),
		SkipTests:    cfg.SkipTests,
		Audit:        cfg.Audit,
	}}
	a := &analysis.Analyzer{
		Name:      "natssend",
		Doc:       doc,
		URL:       "https://pkg.go.dev/github.com/natssend/natssend/analyzer",
		Run:       c.run,
		FactTypes: []analysis.Fact{new(sendsFact)},
	}
	bindFlags(&a.Flags, &c.cfg)
	return a, nil
}

// checker holds the configuration of one Analyzer.
type checker struct {
	cfg Config
}

// sendsFact marks a function or method whose body (outside function
// literals) sends, directly or through another function known to send.
type sendsFact struct {
	// Via names the send API the function ends up calling.
	Via string
	// Kind is what that send does (publish, request, reply, ...).
	Kind uint8
}

// AFact marks sendsFact as an analysis.Fact.
func (*sendsFact) AFact() {}

func (f *sendsFact) String() string { return "sends via " + f.Via }

// finding is a candidate diagnostic. Findings that would not be reported
// under the current configuration (exempt package, disabled category) are
// kept so that a directive on them is not called unused.
type finding struct {
	category string
	pos, end token.Pos
	api      string // the send or connect API, for audit entries
	message  string
	report   bool
	fix      func() []analysis.SuggestedFix
}

// state is the per-pass state of the analyzer.
type state struct {
	pass     *analysis.Pass
	set      *settings
	exempt   bool
	files    map[*token.File]*ast.File
	tests    map[*token.File]bool
	contents map[*token.File][]byte
	dirs     map[*token.File]*fileDirectives
	findings []*finding

	senders   map[*types.Func]sendInfo // functions of this package known to send
	callers   []*types.Func            // functions with calls to local functions, in source order
	edges     map[*types.Func][]*types.Func
	calls     []localCall // calls that may send, resolved after the fixpoint
	sendCalls []*ast.CallExpr

	// For the retry check.
	bodies      map[*ast.BlockStmt]*fnBody
	closures    map[*types.Var]*ast.FuncLit // local variables bound once to a function literal
	assigned    map[*types.Var]int          // assignments to those variables
	litSends    map[*ast.FuncLit]*sendInfo
	boolDefs    map[*types.Var]ast.Expr // bool variables defined from an expression
	helperCalls []helperCall
}

// localCall is a call of a function of the package being analyzed.
type localCall struct {
	call   *ast.CallExpr
	callee *types.Func
}

func (c *checker) run(pass *analysis.Pass) (any, error) {
	st := &state{
		pass:     pass,
		set:      c.cfg.compile(),
		files:    make(map[*token.File]*ast.File, len(pass.Files)),
		tests:    make(map[*token.File]bool, len(pass.Files)),
		contents: make(map[*token.File][]byte),
		dirs:     make(map[*token.File]*fileDirectives),
		senders:  make(map[*types.Func]sendInfo),
		edges:    make(map[*types.Func][]*types.Func),
		bodies:   make(map[*ast.BlockStmt]*fnBody),
		closures: make(map[*types.Var]*ast.FuncLit),
		assigned: make(map[*types.Var]int),
		litSends: make(map[*ast.FuncLit]*sendInfo),
		boolDefs: make(map[*types.Var]ast.Expr),
	}
	st.exempt = st.set.exempt(pass.Pkg.Path())
	for _, f := range pass.Files {
		tf := pass.Fset.File(f.FileStart)
		if tf == nil {
			continue
		}
		st.files[tf] = f
		st.tests[tf] = strings.HasSuffix(tf.Name(), "_test.go")
		if fd := parseDirectives(f, tf, st.tests[tf], func() []byte { return st.content(tf) }); fd != nil {
			st.dirs[tf] = fd
		}
	}
	// nats.go itself is not analyzed: its sends are the raw send list, and
	// inferring facts there would make Connect, Subscribe, Ack... senders.
	if dependsOnNATS(pass.Pkg) && !isNATSPackage(pass.Pkg.Path()) {
		for _, f := range pass.Files {
			st.scan(f)
		}
		st.propagate()
		for v, n := range st.assigned {
			if n != 1 {
				delete(st.closures, v)
			}
		}
		if st.set.enabled[CategoryRetry] {
			if len(st.sendCalls) > 0 {
				st.checkRetries()
			}
		} else {
			// A directive on a send may be meant for the disabled retry
			// check: keep it from being called unused.
			for _, call := range st.sendCalls {
				st.findings = append(st.findings, &finding{category: CategoryRetry, pos: call.Pos(), end: call.End()})
			}
		}
	}
	st.report()
	return nil, nil
}

// content returns the source of the file, or nil if it cannot be read.
func (st *state) content(tf *token.File) []byte {
	if b, ok := st.contents[tf]; ok {
		return b
	}
	b, err := st.pass.ReadFile(tf.Name())
	if err != nil {
		b = nil
	}
	st.contents[tf] = b
	return b
}

// source returns the source text of n, or "" if it is not available.
func (st *state) source(n ast.Node) string {
	tf := st.pass.Fset.File(n.Pos())
	if tf == nil {
		return ""
	}
	b := st.content(tf)
	start, end := tf.Offset(n.Pos()), tf.Offset(n.End())
	if b == nil || start < 0 || end > len(b) || start > end {
		return ""
	}
	return string(b[start:end])
}

// scan walks one file for raw sends, connects and calls that may send.
func (st *state) scan(file *ast.File) {
	ast.PreorderStack(file, nil, func(n ast.Node, stack []ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			st.selector(n, stack)
		case *ast.CallExpr:
			st.call(n, stack)
		case *ast.FuncDecl:
			if n.Body != nil {
				self, _ := st.pass.TypesInfo.Defs[n.Name].(*types.Func)
				st.bodies[n.Body] = &fnBody{body: n.Body, self: self}
			}
		case *ast.FuncLit:
			st.bodies[n.Body] = &fnBody{body: n.Body, lit: n}
		case *ast.ForStmt, *ast.RangeStmt:
			if fb := st.innermost(stack); fb != nil {
				fb.loops = true
			}
		case *ast.BranchStmt:
			if fb := st.innermost(stack); fb != nil && n.Tok == token.GOTO {
				fb.loops = true
			}
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				id, ok := l.(*ast.Ident)
				if !ok {
					continue
				}
				v, ok := st.pass.TypesInfo.ObjectOf(id).(*types.Var)
				if !ok {
					continue
				}
				st.assigned[v]++
				if len(n.Rhs) == len(n.Lhs) {
					if lit, ok := ast.Unparen(n.Rhs[i]).(*ast.FuncLit); ok {
						st.closures[v] = lit
					}
					if n.Tok == token.DEFINE && isBool(v.Type()) {
						st.boolDefs[v] = n.Rhs[i]
					}
				}
			}
		case *ast.ValueSpec:
			for i, name := range n.Names {
				v, ok := st.pass.TypesInfo.Defs[name].(*types.Var)
				if !ok {
					continue
				}
				st.assigned[v]++
				if len(n.Values) == len(n.Names) {
					if lit, ok := ast.Unparen(n.Values[i]).(*ast.FuncLit); ok {
						st.closures[v] = lit
					}
				}
			}
		case *ast.UnaryExpr:
			if id, ok := ast.Unparen(n.X).(*ast.Ident); ok && n.Op == token.AND {
				if v, ok := st.pass.TypesInfo.Uses[id].(*types.Var); ok {
					st.assigned[v] += 2 // its address escapes
				}
			}
		}
		return true
	})
}

// innermost returns the function body enclosing the top of stack.
func (st *state) innermost(stack []ast.Node) *fnBody {
	for i := len(stack) - 1; i >= 0; i-- {
		switch n := stack[i].(type) {
		case *ast.FuncLit:
			return st.bodies[n.Body]
		case *ast.FuncDecl:
			return st.bodies[n.Body]
		}
	}
	return nil
}

// selectedFunc returns the function or method a selector denotes, if any.
func (st *state) selectedFunc(sel *ast.SelectorExpr) *types.Func {
	if s := st.pass.TypesInfo.Selections[sel]; s != nil {
		if s.Kind() == types.FieldVal {
			return nil
		}
		fn, _ := s.Obj().(*types.Func)
		return fn
	}
	fn, _ := st.pass.TypesInfo.Uses[sel.Sel].(*types.Func)
	return fn
}

// selector reports a raw send API named by sel: called, or taken as a
// method value or method expression.
func (st *state) selector(sel *ast.SelectorExpr, stack []ast.Node) {
	fn := st.selectedFunc(sel)
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
		report:   st.set.enabled[CategoryRawSend] && !st.exempt,
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
	f.message = fmt.Sprintf("%s%s%s, or mark it %s <reason>", subject, sep, rs.advice, directivePrefix)
	isExpr := st.pass.TypesInfo.Selections[sel] != nil && st.pass.TypesInfo.Selections[sel].Kind() == types.MethodExpr
	if call != nil && !isExpr && rs.fix != fixNone {
		f.fix = func() []analysis.SuggestedFix { return st.rawFix(call, sel, rs.fix) }
	}
	st.findings = append(st.findings, f)
}

// calleeFunc returns the function or method called, if it is one.
func (st *state) calleeFunc(call *ast.CallExpr) *types.Func {
	fn, _ := typeutil.Callee(st.pass.TypesInfo, call).(*types.Func)
	if fn != nil {
		fn = fn.Origin()
	}
	return fn
}

// enclosing returns the function declaration enclosing the top of stack and
// whether a function literal lies in between. A function literal called on
// the spot (func() { ... }(), also deferred) runs as part of the enclosing
// function and does not count; one started by a go statement does.
func enclosing(stack []ast.Node) (decl *ast.FuncDecl, inLit bool) {
	for i := len(stack) - 1; i >= 0; i-- {
		switch n := stack[i].(type) {
		case *ast.FuncLit:
			if !calledOnTheSpot(n, stack[:i]) {
				inLit = true
			}
		case *ast.FuncDecl:
			return n, inLit
		}
	}
	return nil, inLit
}

// calledOnTheSpot reports whether lit, whose ancestors are stack, is called
// where it is written, other than by a go statement.
func calledOnTheSpot(lit *ast.FuncLit, stack []ast.Node) bool {
	var child ast.Node = lit
	for i := len(stack) - 1; i >= 0; i-- {
		switch p := stack[i].(type) {
		case *ast.ParenExpr:
			child = p
			continue
		case *ast.CallExpr:
			if p.Fun != child {
				return false
			}
			_, isGo := stackAt(stack, i-1).(*ast.GoStmt)
			return !isGo
		}
		return false
	}
	return false
}

func stackAt(stack []ast.Node, i int) ast.Node {
	if i < 0 || i >= len(stack) {
		return nil
	}
	return stack[i]
}

func isBool(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsBoolean != 0
}

// call handles one call: connects, and calls that may send.
func (st *state) call(call *ast.CallExpr, stack []ast.Node) {
	fb := st.innermost(stack)
	fn := st.calleeFunc(call)
	if fn == nil {
		// Perhaps a local variable bound to a function literal, or a
		// function literal called on the spot.
		switch ast.Unparen(call.Fun).(type) {
		case *ast.Ident, *ast.FuncLit:
			if fb != nil {
				fb.calls = append(fb.calls, call)
			}
		}
		return
	}
	if st.set.helpers[funcKey(fn)] {
		st.helperCalls = append(st.helperCalls, helperCall{call, funcKey(fn), fn.Pkg().Name() + "." + fn.Name()})
	}
	if options, ok := isConnect(fn); ok {
		st.checkConnect(call, options, stack)
	}
	var caller *types.Func
	if decl, inLit := enclosing(stack); decl != nil && !inLit {
		caller, _ = st.pass.TypesInfo.Defs[decl.Name].(*types.Func)
	}
	if si, ok := st.knownSender(fn); ok {
		st.sendCalls = append(st.sendCalls, call)
		if fb != nil {
			fb.calls = append(fb.calls, call)
		}
		if caller != nil {
			if _, done := st.senders[caller]; !done {
				st.senders[caller] = sendInfo{via: si.via, kind: si.kind}
			}
		}
		return
	}
	if fn.Pkg() == st.pass.Pkg {
		st.calls = append(st.calls, localCall{call, fn})
		if fb != nil {
			fb.calls = append(fb.calls, call)
		}
		if caller != nil {
			if _, seen := st.edges[caller]; !seen {
				st.callers = append(st.callers, caller)
			}
			st.edges[caller] = append(st.edges[caller], fn)
		}
	}
}

// sendInfo describes what a call sends through.
type sendInfo struct {
	via    string   // the send API it ends up calling
	kind   sendKind // what that send does
	js     bool     // the call itself is a JetStream publish
	direct bool     // the call itself is a listed send API (raw or shim)
}

// knownSender reports whether fn is a send API (raw, shim or claimcheck)
// or a function of another package with a sendsFact, and what it sends
// through.
func (st *state) knownSender(fn *types.Func) (sendInfo, bool) {
	key := funcKey(fn)
	if rs, ok := rawSendOf(key); ok {
		return sendInfo{via: rs.display, kind: rs.kind, js: rs.jetStream, direct: true}, true
	}
	if ss, ok := shimSendOf(key); ok {
		return sendInfo{via: ss.display, kind: ss.kind, js: ss.jetStream, direct: true}, true
	}
	if fn.Pkg() != nil && fn.Pkg() != st.pass.Pkg && !isNATSPackage(fn.Pkg().Path()) {
		var fact sendsFact
		if st.pass.ImportObjectFact(fn.Origin(), &fact) {
			return sendInfo{via: fact.Via, kind: sendKind(fact.Kind)}, true
		}
	}
	return sendInfo{}, false
}

// sendVia reports whether fn is known to send, including functions of this
// package found to send.
func (st *state) sendVia(fn *types.Func) (sendInfo, bool) {
	fn = fn.Origin()
	if si, ok := st.knownSender(fn); ok {
		return si, true
	}
	si, ok := st.senders[fn]
	return si, ok
}

// propagate computes the functions of this package that send, through
// calls of other functions of this package, and exports their facts.
func (st *state) propagate() {
	for changed := true; changed; {
		changed = false
		for _, caller := range st.callers {
			if _, ok := st.senders[caller]; ok {
				continue
			}
			for _, callee := range st.edges[caller] {
				if si, ok := st.senders[callee]; ok {
					st.senders[caller] = si
					changed = true
					break
				}
			}
		}
	}
	// natssend's own shim and claimcheck packages export no facts: their
	// sends are listed (shimSendOf), and nothing else there counts as one.
	if !isKnownShim(st.pass.Pkg.Path()) {
		for fn, si := range st.senders {
			if fn.Pkg() == st.pass.Pkg {
				st.pass.ExportObjectFact(fn, &sendsFact{Via: si.via, Kind: uint8(si.kind)})
			}
		}
	}
	for _, lc := range st.calls {
		if _, ok := st.senders[lc.callee]; ok {
			st.sendCalls = append(st.sendCalls, lc.call)
		}
	}
}

// skipFile reports whether nothing may be reported in the file.
func (st *state) skipFile(tf *token.File) bool {
	return tf == nil || (st.set.skipTest && st.tests[tf])
}

// report matches findings with directives and reports what remains.
func (st *state) report() {
	slices.SortStableFunc(st.findings, func(a, b *finding) int {
		return cmp.Or(cmp.Compare(a.pos, b.pos), strings.Compare(a.category, b.category))
	})
	type auditEntry struct {
		pos, end token.Pos
		api      string
		cats     []string
		reason   string
	}
	var audit []*auditEntry
	seen := make(map[string]bool)
	for _, f := range st.findings {
		key := fmt.Sprintf("%d/%s", f.pos, f.category)
		if seen[key] {
			continue
		}
		seen[key] = true
		tf := st.pass.Fset.File(f.pos)
		if st.skipFile(tf) {
			continue
		}
		var applied *directive
		uncovered := false // a directive applies but does not cover this retry
		if fd := st.dirs[tf]; fd != nil {
			sp := stmtSpan(fd.file, tf, f.pos)
			for _, d := range fd.list {
				if !d.applies(sp) {
					continue
				}
				switch {
				case d.malformed != "":
					d.near = d.near || f.report
				case d.covers(f.category):
					d.used = true
					if applied == nil {
						applied = d
					}
				case f.report:
					d.retryOnly = true
					uncovered = true
				}
			}
		}
		if !f.report {
			continue
		}
		if applied != nil {
			applied.suppressed = true
			if n := len(audit); n > 0 && audit[n-1].pos == f.pos {
				audit[n-1].cats = append(audit[n-1].cats, f.category)
			} else {
				audit = append(audit, &auditEntry{f.pos, f.end, f.api, []string{f.category}, applied.reason})
			}
			continue
		}
		msg := f.message
		if uncovered {
			msg += " (" + directivePrefix + " covers a retry only when its reason starts with \"" + retryPrefix + "\")"
		}
		d := analysis.Diagnostic{Pos: f.pos, End: f.end, Category: f.category, Message: msg}
		if f.fix != nil {
			d.SuggestedFixes = f.fix()
		}
		st.pass.Report(d)
	}
	if st.set.audit {
		for _, a := range audit {
			reason := a.reason
			if reason == "" {
				reason = "(no reason given)"
			}
			st.pass.Report(analysis.Diagnostic{
				Pos:      a.pos,
				End:      a.end,
				Category: CategoryReviewed,
				Message:  fmt.Sprintf("reviewed %s (%s): %s", a.api, strings.Join(a.cats, ", "), reason),
			})
		}
	}
	for tf, fd := range st.sortedDirs() {
		if st.skipFile(tf) {
			continue
		}
		for _, d := range fd.list {
			var msg string
			switch {
			case d.malformed != "":
				if d.spaced && !d.near {
					continue // perhaps prose quoting the directive
				}
				msg = d.malformed
			case !d.used && d.retryOnly:
				msg = "unused " + directivePrefix + " directive: it does not cover the retry reported on this statement; review a retry with " + directivePrefix + " " + retryPrefix + " <reason>"
			case !d.used:
				msg = "unused " + directivePrefix + " directive: no NATS send, retry or connect is reported on this statement; remove it"
			case d.reason == "":
				msg = directivePrefix + " needs a reason: say why this send is safe, e.g. " + directivePrefix + " reply is a fixed 2-byte ack"
			default:
				continue
			}
			st.pass.Report(analysis.Diagnostic{Pos: d.pos, End: d.end, Category: CategoryDirective, Message: msg})
		}
	}
}

// sortedDirs iterates over the files with directives in position order.
func (st *state) sortedDirs() func(yield func(*token.File, *fileDirectives) bool) {
	return func(yield func(*token.File, *fileDirectives) bool) {
		tfs := make([]*token.File, 0, len(st.dirs))
		for tf := range st.dirs {
			tfs = append(tfs, tf)
		}
		slices.SortFunc(tfs, func(a, b *token.File) int { return cmp.Compare(a.Base(), b.Base()) })
		for _, tf := range tfs {
			if !yield(tf, st.dirs[tf]) {
				return
			}
		}
	}
}
