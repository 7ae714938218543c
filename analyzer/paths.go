package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/cfg"
)

// callsFunc reports whether node contains a call of fn (outside function literals).
func callsFunc(info *types.Info, node ast.Node, fn *types.Func) bool {
	if fn == nil {
		return false
	}
	found := false
	ast.Inspect(node, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			if calleeFunc(info, n) == fn {
				found = true
			}
		}
		return !found
	})
	return found
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
			if callsFunc(st.info, node, self) {
				r.reached[l][1] = true
				r.recursed = true
				return
			}
			if ret, ok := node.(*ast.ReturnStmt); ok && onReturn != nil {
				onReturn(ret, l, valid)
				return
			}
			if assigns(st.info, node, c.v) && !st.transforms(node, c) {
				valid = false
			}
			dirty = d.apply(node, dirty)
		}
		dirty = d.rangeDirty(b, dirty)
		if b.Kind == cfg.KindRangeLoop && c.v != nil {
			if rs, ok := b.Stmt.(*ast.RangeStmt); ok && (assigns(st.info, &ast.AssignStmt{Lhs: nonNil(rs.Key, rs.Value)}, c.v)) {
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
