package analyzer

import (
	"bytes"
	"go/ast"
	"go/printer"
	"go/types"
	"slices"
)

// sentAgainAt reports whether the send s at l, when it fails, is followed
// by a later send of the same operation with the same body (sends[k] at
// locs[k]), and by no such send on a path where it may have worked: the
// same request to a backup connection after the primary failed, without
// a loop. It returns the later send's index and the paths.
func (rt *retryCheck) sentAgainAt(fb *fnBody, bc *bodyCFG, locs []loc, sends []sendSite, j int) (int, *pathResult, bool) {
	s, l := sends[j], locs[j]
	if l.b == nil {
		return 0, nil, false
	}
	var c carrier
	var d *deps
	for k := range sends {
		if k == j || locs[k].b == nil || sends[k].call.Pos() <= s.call.Pos() || !rt.sameOperation(s, sends[k]) {
			continue
		}
		if d == nil {
			var ok bool
			if c, ok = carrierOf(rt.info, l.b.Nodes[l.i], s.call); !ok {
				return 0, nil, false
			}
			d = depsOf(rt.info, fb, s)
		}
		r := retryPaths(rt.flow, rt.graph, &search{
			fb: fb, g: bc.g, start: l.b, i: l.i,
			carriers: append([]carrier{c}, bc.recvs...), recv: bc.recvNodes,
			caseTag: bc.caseTag, typeCase: bc.typeCase, flags: bc.flags, d: d,
			tb: locs[k].b, ti: locs[k].i,
		})
		if r.expectsFailure {
			continue
		}
		if r.reached(labelFailure, false, false) && !r.reached(labelSuccess, false, true) && !r.reached(labelNone, false, true) &&
			!touched(d, r.region(l.b, true)[l.i+1:], sends[k].call) {
			return k, r, true
		}
	}
	return 0, nil, false
}

// touched reports whether the nodes between two sends may change what the
// first sent: a store to a variable of its body (opts.Encrypt = false,
// which a loop would repeat before each send, but here runs only before
// the second), its address taken, or a call given one of them as its
// receiver or an argument (opts.Limits.Add(...)), other than the second
// send itself. A variable only of the send's target (b in b.nc.Request,
// also through a local: nc := b.nc; nc.Request) is not part of the body:
// a call on it (b.reconnect()) can change the connection, not what is
// sent.
func touched(d *deps, nodes []ast.Node, second *ast.CallExpr) bool {
	targetOnly := (d.target | d.targetFrom) &^ d.body
	found := false
	for _, node := range nodes {
		if len(d.effectsOf(node)) > 0 {
			return true
		}
		ast.Inspect(node, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.CallExpr:
				if n == second {
					return false
				}
				if sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr); ok && d.mask(sel.X)&^targetOnly != 0 {
					found = true
				}
				for _, a := range n.Args {
					found = found || d.mask(a)&^targetOnly != 0
				}
			}
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// sameOperation reports whether the sends a and b call the same function
// (or the same function variable) with the same body: the same
// expressions, denoting the same objects, outside the target.
func (rt *retryCheck) sameOperation(a, b sendSite) bool {
	fa, fb := calleeFunc(rt.info, a.call), calleeFunc(rt.info, b.call)
	if fa != fb {
		return false
	}
	if fa == nil {
		va, vb := objectOf(rt.info, a.call.Fun), objectOf(rt.info, b.call.Fun)
		if va == nil || va != vb {
			return false
		}
	}
	pa, _ := bodyParts(rt.info, a)
	pb, _ := bodyParts(rt.info, b)
	if len(pa) == 0 || len(pa) != len(pb) {
		return false
	}
	for i := range pa {
		if !rt.sameExpr(pa[i], pb[i]) {
			return false
		}
	}
	return true
}

// sameOptions reports whether the sends a and b, of the same operation,
// pass the same arguments outside their targets: the same ID options, so
// that an ID fixed for a is the one b sends.
func (rt *retryCheck) sameOptions(a, b sendSite) bool {
	if len(a.call.Args) != len(b.call.Args) {
		return false
	}
	_, targets := bodyParts(rt.info, a)
	for i, arg := range a.call.Args {
		if !slices.Contains(targets, arg) && !rt.sameExpr(arg, b.call.Args[i]) {
			return false
		}
	}
	return true
}

// sameExpr reports whether x and y denote the same objects and are
// written alike: the same source text (printed alike when the source is
// not available), composite and function literals included.
func (rt *retryCheck) sameExpr(x, y ast.Expr) bool {
	ids := func(e ast.Expr) []types.Object {
		var os []types.Object
		ast.Inspect(e, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				os = append(os, rt.info.ObjectOf(id))
			}
			return true
		})
		return os
	}
	if !slices.Equal(ids(x), ids(y)) {
		return false
	}
	if sx, sy := rt.text(x), rt.text(y); sx != nil && sy != nil {
		return bytes.Equal(sx, sy)
	}
	var bx, by bytes.Buffer
	return printer.Fprint(&bx, rt.pass.Fset, x) == nil && printer.Fprint(&by, rt.pass.Fset, y) == nil && bytes.Equal(bx.Bytes(), by.Bytes())
}

// text returns the source text of e, or nil.
func (rt *retryCheck) text(e ast.Expr) []byte {
	tf := rt.pass.Fset.File(e.Pos())
	if tf == nil {
		return nil
	}
	b := rt.rep.content(tf)
	start, end := tf.Offset(e.Pos()), tf.Offset(e.End())
	if b == nil || start < 0 || end > len(b) || start > end {
		return nil
	}
	return b[start:end]
}
