package analyzer

import (
	"go/ast"
	"go/constant"
	"go/types"
	"strings"
)

// Subjects no claim check is sent to: the server's own ("$SYS.", "$JS.",
// advisories and API subjects start with "$"; a claimcheck Store
// publishes to the caller's subject), and inboxes, which receive replies
// to raw requests (a responder claim-checks a reply only for a caller
// that said it accepts them, which a raw request does not).
const (
	serverSubjectPrefix = "$"
	inboxPrefix         = "_INBOX."
)

// noClaimChecks reports whether the subscription's subject can carry no
// claim check: a constant server subject or inbox prefix, or an inbox
// made in the package (also with a suffix: inbox + ".*"). NextMsg and
// Fetch are judged only on a subscription made in the package.
func (c *recvCheck) noClaimChecks(s recvSite) bool {
	call, arg := s.call, s.api.subject
	if arg < 0 {
		// sub.NextMsg(d), sub.Fetch(n): the subject sub was made for.
		sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
		if !ok {
			return false
		}
		v := c.varOf(sel.X)
		if call, arg = c.subs[v], 0; v == nil || call == nil {
			// A subscription made elsewhere (a parameter: the caller
			// chose the subject, a trace or advisory subject perhaps)
			// is not judged; a jetstream consumer reads a stream.
			return isNamed(c.info.TypeOf(sel.X), natsPath, "Subscription")
		}
	}
	if arg >= len(call.Args) {
		return false
	}
	return c.noClaimSubject(call.Args[arg])
}

// noClaimSubject reports whether e is a subject that can carry no claim
// check (see noClaimChecks).
func (c *recvCheck) noClaimSubject(e ast.Expr) bool {
	if c.constSubject(e, serverSubjectPrefix) || c.constSubject(e, inboxPrefix) {
		return true
	}
	e = ast.Unparen(e)
	for b, ok := e.(*ast.BinaryExpr); ok; b, ok = e.(*ast.BinaryExpr) {
		e = ast.Unparen(b.X) // the prefix decides
	}
	if p := c.sprintfPrefix(e); p != nil {
		return c.noClaimSubject(p)
	}
	if call, ok := e.(*ast.CallExpr); ok {
		return inboxFuncs[funcKey(calleeFunc(c.info, call))]
	}
	v := c.varOf(e)
	return v != nil && (c.inbox[v] || c.server[v])
}

// noteInbox records a store of rhs to lhs: the variable or field stays an
// inbox while every value stored to it is one, and holds server subjects
// once one is stored to it (metrics := api.JSMetricPrefix + ".>", then
// metrics = cfg.MetricsSubject for an imported stream of advisories).
func (c *recvCheck) noteInbox(lhs, rhs ast.Expr) {
	v := c.varOf(lhs)
	if v == nil || rhs == nil {
		return
	}
	if c.constSubject(rhs, serverSubjectPrefix) {
		c.server[v] = true
	}
	call, ok := ast.Unparen(rhs).(*ast.CallExpr)
	if ok && syncSubscribes[funcKey(calleeFunc(c.info, call))] {
		if _, seen := c.subs[v]; seen {
			c.subs[v] = nil // assigned twice: not known
		} else {
			c.subs[v] = call
		}
	}
	is := ok && inboxFuncs[funcKey(calleeFunc(c.info, call))]
	if prev, seen := c.inbox[v]; seen {
		is = is && prev
	}
	c.inbox[v] = is
}

// varOf returns the variable or field an identifier or selector names.
func (c *recvCheck) varOf(e ast.Expr) *types.Var {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		v, _ := c.info.ObjectOf(e).(*types.Var)
		return v
	case *ast.SelectorExpr:
		v, _ := c.info.ObjectOf(e.Sel).(*types.Var)
		return v
	}
	return nil
}

// sprintfPrefix returns the argument that starts the subject
// fmt.Sprintf("%s.>", prefix) makes, or nil.
func (c *recvCheck) sprintfPrefix(e ast.Expr) ast.Expr {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) < 2 || funcKey(calleeFunc(c.info, call)) != "fmt.Sprintf" {
		return nil
	}
	tv, ok := c.info.Types[call.Args[0]]
	if !ok || tv.Value == nil || tv.Value.Kind() != constant.String || !strings.HasPrefix(constant.StringVal(tv.Value), "%s") {
		return nil
	}
	return call.Args[1]
}

// constSubject reports whether e is a subject whose constant prefix (the
// whole of e, or its leftmost operand) starts with prefix.
func (c *recvCheck) constSubject(e ast.Expr, prefix string) bool {
	for {
		e = ast.Unparen(e)
		if tv, ok := c.info.Types[e]; ok && tv.Value != nil && tv.Value.Kind() == constant.String {
			return strings.HasPrefix(constant.StringVal(tv.Value), prefix)
		}
		b, ok := e.(*ast.BinaryExpr)
		if !ok {
			return false
		}
		e = b.X
	}
}
