package analyzer

import "go/types"

// cycles are the strongly connected components of a call graph, computed
// once the scan has added every edge: f reaches g and g reaches f exactly
// when they are in the same component. mayRecurse asks, for each call of
// a function's body, whether the callee reaches the caller back; with the
// edge caller → callee known, that is whether they share a component, an
// answer that needs no search of the graph per call.
type cycles struct {
	comp  map[*types.Func]int // component of each function with calls or callers
	edges map[[2]*types.Func]bool
}

// cyclesOf computes the components of cg (Tarjan's algorithm).
func cyclesOf(cg *callGraph) *cycles {
	c := &cycles{comp: make(map[*types.Func]int), edges: make(map[[2]*types.Func]bool)}
	index := make(map[*types.Func]int)
	low := make(map[*types.Func]int)
	onStack := make(map[*types.Func]bool)
	var stack []*types.Func
	next, comps := 0, 0
	var visit func(f *types.Func)
	visit = func(f *types.Func) {
		index[f], low[f] = next, next
		next++
		stack = append(stack, f)
		onStack[f] = true
		for _, g := range cg.edges[f] {
			c.edges[[2]*types.Func{f, g}] = true
			if _, seen := index[g]; !seen {
				visit(g)
				low[f] = min(low[f], low[g])
			} else if onStack[g] {
				low[f] = min(low[f], index[g])
			}
		}
		if low[f] == index[f] {
			for {
				g := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[g] = false
				c.comp[g] = comps
				if g == f {
					break
				}
			}
			comps++
		}
	}
	for _, f := range cg.callers {
		if _, seen := index[f]; !seen {
			visit(f)
		}
	}
	return c
}

// callsBackTo reports whether fn, which caller calls, reaches caller:
// through the components when the edge caller → fn is in the graph,
// else by a search.
func (cg *callGraph) callsBackTo(fn, caller *types.Func) bool {
	if cg.cyc == nil {
		cg.cyc = cyclesOf(cg)
	}
	if cg.cyc.edges[[2]*types.Func{caller, fn}] {
		return cg.cyc.comp[fn] == cg.cyc.comp[caller]
	}
	return cg.reaches(fn, caller)
}
