package analyzer

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/cfg"
)

// loc is the position of a send in a control-flow graph: block and node
// index.
type loc struct {
	b *cfg.Block
	i int
}

// locate finds the block and node of each send in g.
func locate(info *types.Info, g *cfg.CFG, body *ast.BlockStmt, sends []sendSite) []loc {
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

// failsTest reports whether node calls a testing method that fails the
// test (outside function literals).
func failsTest(info *types.Info, node ast.Node) bool {
	found := false
	ast.Inspect(node, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			found = found || testFailFuncs[funcKey(calleeFunc(info, n))]
		}
		return !found
	})
	return found
}

// returnsNewError reports whether node returns a new error as its last
// result (fmt.Errorf, errors.New).
func returnsNewError(info *types.Info, node ast.Node) bool {
	ret, ok := node.(*ast.ReturnStmt)
	if !ok || len(ret.Results) == 0 {
		return false
	}
	call, ok := ast.Unparen(ret.Results[len(ret.Results)-1]).(*ast.CallExpr)
	return ok && newErrorFuncs[funcKey(calleeFunc(info, call))]
}

// assertsNotDelivered reports whether node is a call statement passing the
// carried error and an error proving nothing was delivered, such as a
// test assertion (require.ErrorIs(t, err, nats.ErrNoResponders)) that
// stops the test unless the error is that one.
func assertsNotDelivered(info *types.Info, node ast.Node, c carrier) bool {
	es, ok := node.(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := ast.Unparen(es.X).(*ast.CallExpr)
	if !ok {
		return false
	}
	hasErr, hasSentinel := false, false
	for _, a := range call.Args {
		hasErr = hasErr || carries(info, c, a)
		hasSentinel = hasSentinel || nothingSent(info, c, a)
	}
	return hasErr && hasSentinel
}
