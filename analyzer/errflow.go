package analyzer

import (
	"go/ast"
	"go/constant"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/cfg"
)

// notDeliveredFact marks an error predicate, func(error) bool, that is
// true only for errors proving a send had no effect
// (func isNoResponders(err error) bool { return errors.Is(err,
// nats.ErrNoResponders) }), so that a retry guarded by it is not reported
// in other packages either.
type notDeliveredFact struct{}

// AFact marks notDeliveredFact as an analysis.Fact.
func (*notDeliveredFact) AFact() {}

func (*notDeliveredFact) String() string { return "true only when nothing was delivered" }

// errFlow labels the paths leaving a send by the tests of its error
// (cond, compare): failure, success, or an error proving nothing was
// delivered. Besides the nats.go, shim and claimcheck errors that prove
// it, it knows the package's own evidence: its error predicates true
// only for such errors (isSafePredicate, also by a notDeliveredFact of
// another package) and its sentinel errors meaning the responder
// declined (isDeclined, inferred by the retry check). The path search
// and the retry helper checks use it.
type errFlow struct {
	pass      *analysis.Pass
	info      *types.Info
	vals      *valueIndex
	preds     []*ast.FuncDecl      // candidate error predicates (func(error) bool)
	safePreds map[*types.Func]bool // predicates true only for errors that prove nothing was delivered
	declined  map[*types.Var]bool  // sentinel errors returned only when the responder declined
}

// newErrFlow returns the error-flow labels of pass, no predicate or
// sentinel known yet.
func newErrFlow(pass *analysis.Pass, vals *valueIndex) *errFlow {
	return &errFlow{
		pass:      pass,
		info:      pass.TypesInfo,
		vals:      vals,
		safePreds: make(map[*types.Func]bool),
		declined:  make(map[*types.Var]bool),
	}
}

// predicateCandidate records a function declaration shaped like an error
// predicate: one error parameter, one bool result, a body that is one
// return statement.
func (ef *errFlow) predicateCandidate(fd *ast.FuncDecl) {
	if fd.Body == nil || len(fd.Body.List) != 1 || fd.Recv != nil {
		return
	}
	ret, ok := fd.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return
	}
	fn, _ := ef.info.Defs[fd.Name].(*types.Func)
	if fn == nil {
		return
	}
	sig := fn.Type().(*types.Signature)
	if sig.Params().Len() != 1 || !isErrorType(sig.Params().At(0).Type()) ||
		sig.Results().Len() != 1 || !isBool(sig.Results().At(0).Type()) {
		return
	}
	ef.preds = append(ef.preds, fd)
}

// inferPredicates finds the package's error predicates that are true only
// for errors proving nothing was delivered, and exports their facts.
func (ef *errFlow) inferPredicates() {
	for changed := true; changed; {
		changed = false
		for _, fd := range ef.preds {
			fn := ef.info.Defs[fd.Name].(*types.Func)
			if ef.safePreds[fn] {
				continue
			}
			param := fn.Type().(*types.Signature).Params().At(0)
			t, _ := ef.cond(carrier{v: param}, fd.Body.List[0].(*ast.ReturnStmt).Results[0])
			if t == one(labelSafe) {
				ef.safePreds[fn] = true
				changed = true
			}
		}
	}
	if isKnownShim(ef.pass.Pkg.Path()) {
		return
	}
	for fn := range ef.safePreds {
		ef.pass.ExportObjectFact(fn, new(notDeliveredFact))
	}
}

// isSafePredicate reports whether fn is an error predicate true only for
// errors proving nothing was delivered: of this package, or by a fact.
func (ef *errFlow) isSafePredicate(fn *types.Func) bool {
	if fn == nil {
		return false
	}
	if ef.safePreds[fn] {
		return true
	}
	if fn.Pkg() != nil && fn.Pkg() != ef.pass.Pkg {
		return ef.pass.ImportObjectFact(fn, new(notDeliveredFact))
	}
	return false
}

// refusedCode returns the labels of x == y being true when one side is the
// ErrorCode field of a JetStream API error and the other a code by which
// the stream refused the message (refusedCodes): nothing was stored.
func refusedCode(info *types.Info, x, y ast.Expr) (labels, bool) {
	if isAPIErrorCode(info, y) {
		x, y = y, x
	}
	if !isAPIErrorCode(info, x) {
		return 0, false
	}
	tv := info.Types[y]
	if tv.Value == nil || tv.Value.Kind() != constant.Int {
		return 0, false
	}
	code, ok := constant.Int64Val(tv.Value)
	if !ok || !refusedCodes[code] {
		return 0, false
	}
	return one(labelSafe), true
}

// isAPIErrorCode reports whether e is the ErrorCode field of a
// jetstream.APIError or nats.APIError.
func isAPIErrorCode(info *types.Info, e ast.Expr) bool {
	sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != apiErrorCodeField {
		return false
	}
	t := info.TypeOf(sel.X)
	if t == nil {
		return false
	}
	for _, at := range apiErrorTypes {
		if isNamed(t, at[0], at[1]) {
			return true
		}
	}
	return false
}

// typeCase is one case type of a type switch, tested by the block before
// a KindSwitchNextCase block.
type typeCase struct {
	sw  *ast.TypeSwitchStmt
	typ ast.Expr
}

// typeCases maps each KindSwitchNextCase block of g to the case type
// whose test fails into it: go/cfg makes one such block per case type, in
// order.
func typeCases(g *cfg.CFG, body *ast.BlockStmt) map[*cfg.Block]typeCase {
	var m map[*cfg.Block]typeCase
	parent := make(map[*ast.CaseClause]*ast.TypeSwitchStmt)
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.TypeSwitchStmt:
			for _, cc := range n.Body.List {
				parent[cc.(*ast.CaseClause)] = n
			}
		}
		return true
	})
	if len(parent) == 0 {
		return nil
	}
	seen := make(map[*ast.CaseClause]int)
	for _, b := range g.Blocks {
		if b.Kind != cfg.KindSwitchNextCase {
			continue
		}
		cc, ok := b.Stmt.(*ast.CaseClause)
		if !ok || parent[cc] == nil {
			continue
		}
		k := seen[cc]
		seen[cc]++
		if k < len(cc.List) {
			if m == nil {
				m = make(map[*cfg.Block]typeCase)
			}
			m[b] = typeCase{parent[cc], cc.List[k]}
		}
	}
	return m
}

// typeCaseLabels returns the labels of the true and false outcomes of a
// type switch case on the carrier: case nil is a success, any other
// type a failure.
func typeCaseLabels(info *types.Info, c carrier, tc typeCase) (t, f labels) {
	none := one(labelNone)
	var subject ast.Expr
	switch a := tc.sw.Assign.(type) {
	case *ast.AssignStmt:
		if len(a.Rhs) == 1 {
			subject = a.Rhs[0]
		}
	case *ast.ExprStmt:
		subject = a.X
	}
	ta, ok := ast.Unparen(subject).(*ast.TypeAssertExpr)
	if !ok || !carries(info, c, ta.X) {
		return none, none
	}
	if isNil(info, tc.typ) {
		return one(labelSuccess), one(labelFailure)
	}
	return one(labelFailure), none
}

// isDeclined reports whether e denotes a sentinel error of the package by
// which the responder declined (inferDeclined).
func (ef *errFlow) isDeclined(e ast.Expr) bool {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return false
	}
	v, ok := ef.info.Uses[id].(*types.Var)
	return ok && ef.declined[v]
}
