package analyzer

import (
	"go/ast"
	"go/types"
)

// bodyParts returns the expressions that make up what the send s sends,
// as opposed to where it goes or how long it may take. For a send API
// (raw, shim or claimcheck) the receiver, connection-like parameters and
// the subject (its first string parameter) are the target, and a reply's
// request message is its target too; the body is the rest. For any other
// sender (a wrapper whose meaning the analyzer cannot see) every argument
// is body, and so is a method's receiver. Contexts, durations, a message
// ID option and the variadic publish options are neither: a retry may
// pass a fresh context or deadline and still repeat the same operation.
//
// The target parts are returned too: a retry to the next server is the
// same body to another target, while a batch that moves on to another
// target after a success is not a periodic send of the same operation.
func bodyParts(info *types.Info, s sendSite) (parts, targets []ast.Expr) {
	call := s.call
	switch fun := ast.Unparen(call.Fun).(type) {
	case *ast.SelectorExpr:
		if info.Selections[fun] != nil {
			if s.info.direct {
				targets = append(targets, fun.X)
			} else {
				parts = append(parts, fun.X)
			}
		}
	default:
		parts = append(parts, fun)
	}
	sig, _ := info.TypeOf(call.Fun).Underlying().(*types.Signature)
	subjectSeen := false
	for i, a := range call.Args {
		if isMsgIDOption(info, a) {
			continue
		}
		var pt types.Type
		if sig != nil {
			pt = paramType(sig, i)
		}
		if pt == nil {
			parts = append(parts, a)
			continue
		}
		if isControlType(pt) || s.info.param && isInteger(pt) {
			continue
		}
		if s.info.direct {
			if isTargetType(pt) {
				targets = append(targets, a)
				continue
			}
			if b, ok := pt.Underlying().(*types.Basic); ok && b.Kind() == types.String && !subjectSeen {
				subjectSeen = true // the subject
				targets = append(targets, a)
				continue
			}
			if s.info.kind == kindReply && i == 0 && isNamed(pt, natsPath, msgType) && sig.Recv() == nil {
				targets = append(targets, a) // the request a reply answers
				continue
			}
			if sig.Variadic() && i >= sig.Params().Len()-1 {
				continue // publish options
			}
		}
		parts = append(parts, a)
	}
	return parts, targets
}

// paramType returns the type of the parameter argument i binds to.
func paramType(sig *types.Signature, i int) types.Type {
	n := sig.Params().Len()
	if n == 0 {
		return nil
	}
	if sig.Variadic() && i >= n-1 {
		if sl, ok := sig.Params().At(n - 1).Type().(*types.Slice); ok {
			return sl.Elem()
		}
		return nil
	}
	if i >= n {
		return nil
	}
	return sig.Params().At(i).Type()
}

// isControlType reports whether t is context.Context or time.Duration.
func isControlType(t types.Type) bool {
	for _, ct := range controlTypes {
		if isNamed(t, ct[0], ct[1]) {
			return true
		}
	}
	return false
}

// isInteger reports whether t is an integer type.
func isInteger(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsInteger != 0
}

// isTargetType reports whether t names where a send goes: a connection,
// a JetStream context, a shim client or a claim-check store.
func isTargetType(t types.Type) bool {
	for _, tt := range targetTypes {
		if isNamed(t, tt[0], tt[1]) {
			return true
		}
	}
	return false
}

// dataVarsIn calls f for each local variable that what a message carries
// mentions in e (function literal bodies included), except those declared
// inside e itself. The values in the Header field of a nats.Msg literal are
// skipped, since a header (a trace ID, a fresh message ID) does not make
// another operation; fixedMsgID judges the message ID.
func dataVarsIn(info *types.Info, e ast.Node, f func(*types.Var)) {
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			if t := info.TypeOf(n); t != nil && isNamed(t, natsPath, msgType) {
				for _, elt := range n.Elts {
					if kv, ok := elt.(*ast.KeyValueExpr); ok {
						if k, ok := kv.Key.(*ast.Ident); ok && k.Name == headerField {
							continue
						}
					}
					dataVarsIn(info, elt, f)
				}
				return false
			}
		case *ast.Ident:
			if v := localVar(info, n); v != nil && (v.Pos() < e.Pos() || v.Pos() >= e.End()) {
				f(v)
			}
		}
		return true
	})
}

// isHeaderTarget reports whether an assignment target is a message's
// header (m.Header = ..., m.Header[k] = ...).
func isHeaderTarget(info *types.Info, lhs ast.Expr) bool {
	e := ast.Unparen(lhs)
	if ix, ok := e.(*ast.IndexExpr); ok {
		e = ast.Unparen(ix.X)
	}
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != headerField {
		return false
	}
	t := info.TypeOf(sel.X)
	return t != nil && isNamed(t, natsPath, msgType)
}
