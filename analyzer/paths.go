package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/cfg"
)

// pathState is a point of the search of retryPaths: a block entered with
// the label of the path so far, the carrier that judges it now (0: the
// send's own; more: a receive awaiting its reply) and whether it still
// holds that outcome, which tracked variables changed since the send, the
// bool flags known on the path, and whether a success path has tested the
// reply.
type pathState struct {
	b      *cfg.Block
	l      label
	c      uint8
	valid  bool
	tested bool
	looped bool // the path went through a loop header since the send
	judged bool // the block was entered by a branch on the send's outcome
	// restart: the block is a range loop's header entered from outside
	// its body (continue outer: a batch sent again from its first item).
	restart bool
	dirty   uint64
	known   uint64 // flags whose value is known
	flags   uint64 // of those, the ones that are true
}

// pathResult is what retryPaths found.
type pathResult struct {
	arrivals []arrival
	// expectsFailure is set when a success path fails a test (t.Fatal,
	// t.Error...) or returns a new error (return fmt.Errorf("accepted
	// %q", subj)): the loop checks that each send fails.
	expectsFailure bool
	states         []pathState
	preds          [][]int
	// ackWait is set when a path waiting for an acknowledgement went on
	// because a timer fired (ackwait.go): the case that fired.
	ackWait *ast.CommClause
}

// arrival is a path reaching the send again from a state: with its label,
// whether the body sent is the same, whether a success path tested the
// reply on the way, and whether it came back through recursion.
type arrival struct {
	from     int
	l        label
	same     bool // the same body
	exact    bool // the same body to the same target
	tested   bool
	recursed bool
}

// reached reports whether a path labelled l reaches the send again with
// the same body (and to the same target if exact is set), not counting
// success paths that tested the reply if untested is set.
func (r *pathResult) reached(l label, exact, untested bool) bool {
	for _, a := range r.arrivals {
		if a.l == l && a.same && (a.exact || !exact) && (!untested || !a.tested) {
			return true
		}
	}
	return false
}

// recursed reports whether a failure path reaches the send again through
// recursion.
func (r *pathResult) recursed() bool {
	for _, a := range r.arrivals {
		if a.recursed && a.l == labelFailure {
			return true
		}
	}
	return false
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

// search is the input of retryPaths for one send.
type search struct {
	fb       *fnBody  // the body searched
	g        *cfg.CFG // its control-flow graph
	start    *cfg.Block
	i        int              // the send's node in start
	carriers []carrier        // [0]: the send's; then receives awaiting a reply
	recv     map[ast.Node]int // receive nodes: index in carriers
	self     *types.Func      // the enclosing function, for recursion
	caseTag  map[ast.Expr]ast.Expr
	typeCase map[*cfg.Block]typeCase
	flags    map[*types.Var]int // bool flags of the body, by bit
	d        *deps
	// ackTimeouts are the select cases of a timer firing while the body
	// waits for an acknowledgement (ackwait.go): a failure of the send.
	ackTimeouts map[*cfg.Block]*ast.CommClause
	onReturn    func(*ast.ReturnStmt, label, bool) // if set, a return ends a path
	// then, if set, is a later send of the same body: the arrivals are
	// there (node ti of block tb) instead of back at the send.
	tb *cfg.Block
	ti int
}

// retryPaths follows the paths from the send and records each arrival
// back at it, or at a recursive call of self (by cg). It labels the paths
// with ef. This is the path search of every retry check: sends in loops
// and recursion, helper literals, predicates, declined sentinels and
// inferred retry helpers.
func retryPaths(ef *errFlow, cg *callGraph, sr *search) *pathResult {
	info := ef.info
	r := &pathResult{}
	d, start, i := sr.d, sr.start, sr.i
	for k := range sr.carriers {
		if sr.carriers[k].result != nil {
			sr.carriers[k] = withDerived(info, indexOf(sr.fb), sr.carriers[k])
		}
	}
	var sendPos token.Pos
	if i >= 0 && i < len(start.Nodes) {
		sendPos = start.Nodes[i].Pos()
	}
	var busy *busyTests // lazily: most searches test no reply
	answer := func(b *cfg.Block, e ast.Expr) bool {
		if busy == nil {
			busy = newBusyTests(info, sr.g, sendPos)
		}
		return busy.answer(b, e)
	}
	seen := make(map[pathState]int)
	var queue []int
	newState := func(s pathState) int {
		r.states = append(r.states, s)
		r.preds = append(r.preds, nil)
		return len(r.states) - 1
	}
	push := func(from int, s pathState) {
		if s.b == start && sr.tb != nil {
			return // back at the send: not the later one
		}
		if s.b == start {
			// The nodes before the send in its block run first.
			dirty := s.dirty
			for k := 0; k < i; k++ {
				dirty = d.apply(start.Nodes[k], dirty)
			}
			same := !d.nondet && dirty&d.direct == 0
			exact := same && !d.targetNondet && dirty&d.target == 0
			r.arrivals = append(r.arrivals, arrival{from: from, l: s.l, same: same, exact: exact, tested: s.tested})
			return
		}
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
		switch s.b.Kind {
		case cfg.KindForLoop, cfg.KindForPost, cfg.KindRangeLoop:
			s.looped = true
		}
		if cc := sr.ackTimeouts[s.b]; cc != nil && from == 0 && s.c == 0 && (s.l == labelSuccess || s.l == labelNone) {
			// No acknowledgement before the timer: the send may or may
			// not have arrived. Later tests of its error say nothing.
			s.l, s.valid = labelFailure, false
			if r.ackWait == nil {
				r.ackWait = cc
			}
		}
		c := sr.carriers[s.c]
		for k := from; k < len(s.b.Nodes); k++ {
			node := s.b.Nodes[k]
			if sr.tb != nil && s.b == sr.tb && k == sr.ti {
				r.arrivals = append(r.arrivals, arrival{from: n, l: s.l, same: !d.nondet && s.dirty&d.direct == 0, tested: s.tested})
				return
			}
			if k == i && s.b == start {
				if ret, ok := node.(*ast.ReturnStmt); ok && sr.onReturn != nil {
					sr.onReturn(ret, s.l, s.valid) // return send()
					return
				}
				// What the send assigns (the reply, the error) is new.
				s.dirty |= d.results(node)
				continue
			}
			if rc, direct := cg.recursiveCall(node, sr.self); rc != nil {
				same := !d.nondet && s.dirty&d.direct == 0 && cg.sameRecursion(rc, direct, sr.self, d)
				exact := same && !d.targetNondet && s.dirty&d.target == 0
				r.arrivals = append(r.arrivals, arrival{from: n, l: s.l, same: same, exact: exact, tested: s.tested, recursed: true})
				return
			}
			if ret, ok := node.(*ast.ReturnStmt); ok && sr.onReturn != nil {
				sr.onReturn(ret, s.l, s.valid)
				return
			}
			if s.l == labelSuccess && s.valid && s.judged && !s.looped && !r.expectsFailure && (failsTest(info, node) || returnsNewError(info, node)) {
				r.expectsFailure = true
			}
			if ci, ok := sr.recv[node]; ok && (s.l == labelNone || s.l == labelSuccess || int(s.c) == ci) {
				// Waiting for the reply: its arrival now says whether
				// the send worked. A receive that failed and runs again
				// (NextMsg timed out, wait once more) judges it anew:
				// what arrives then is an answer, not a failure.
				s.c, s.l, s.valid, c = uint8(ci), labelNone, true, sr.carriers[ci]
				s.dirty |= d.results(node)
				continue
			}
			if s.valid && (s.l == labelNone || s.l == labelFailure) && assertsNotDelivered(info, node, c) {
				// require.ErrorIs(t, err, nats.ErrNoResponders): past
				// it, the error is one that proves nothing happened.
				s.l = labelSafe
			}
			if assignsCarrier(info, node, c) && !transforms(info, node, c, s.l) {
				s.valid = false
			}
			s.dirty = d.apply(node, s.dirty)
			s.known, s.flags = setFlags(info, node, sr.flags, s.known, s.flags)
		}
		if s.restart {
			s.dirty = d.rangeRestart(s.b, s.dirty)
		} else {
			s.dirty = d.rangeDirty(s.b, s.dirty)
		}
		if s.b.Kind == cfg.KindRangeLoop {
			if rs, ok := s.b.Stmt.(*ast.RangeStmt); ok && assignsCarrier(info, &ast.AssignStmt{Lhs: nonNil(rs.Key, rs.Value)}, c) {
				s.valid = false
			}
		}
		_, isTypeCase := sr.typeCase[succ(s.b, 1)]
		if len(s.b.Succs) == 2 && (len(s.b.Nodes) > 0 || isTypeCase) && s.b.Kind != cfg.KindRangeLoop {
			t, f := one(labelNone), one(labelNone)
			var e ast.Expr
			isExpr := false
			if len(s.b.Nodes) > 0 {
				e, isExpr = s.b.Nodes[len(s.b.Nodes)-1].(ast.Expr)
			}
			judged := s.valid && (s.l == labelNone || s.l == labelFailure)
			switch {
			case isTypeCase && judged:
				t, f = typeCaseLabels(info, c, sr.typeCase[s.b.Succs[1]])
			case isExpr && judged:
				if tag, ok := sr.caseTag[e]; ok {
					t, f = ef.compare(c, tag, e, true)
				} else {
					t, f = ef.cond(c, e)
				}
			}
			tested := s.tested
			if isExpr && (s.l == labelSuccess && mentionsReply(info, e, c) || judged && s.l == labelNone && readsReply(info, e, c)) && answer(s.b, e) {
				// A success path leaving this condition looked at the
				// reply, also when the condition tests the error too
				// (err == nil && len(replies) == want), and may leave
				// the loop on it.
				tested = true
			}
			val, known := false, false
			if isExpr {
				val, known = evalFlags(info, e, sr.flags, s.known, s.flags)
			}
			lt, lf := refine(s.l, t), refine(s.l, f)
			if isExpr && s.valid && s.l == labelSuccess {
				// A reply coded as a timeout is a failure whose
				// outcome is unknown, not a busy answer.
				if eq, ok := timeoutCode(info, e, c); ok && eq {
					lt = one(labelFailure)
				} else if ok {
					lf = one(labelFailure)
				}
			}
			for k, edge := range []struct {
				b  *cfg.Block
				ls labels
			}{{s.b.Succs[0], lt}, {s.b.Succs[1], lf}} {
				if known && val != (k == 0) {
					continue // a flag decides the branch
				}
				for nl := labelNone; nl < numLabels; nl++ {
					if edge.ls&one(nl) != 0 {
						ns := s
						ns.b, ns.l, ns.tested = edge.b, nl, tested
						ns.judged = t != one(labelNone) || f != one(labelNone)
						push(n, ns)
					}
				}
			}
			return
		}
		for _, succ := range s.b.Succs {
			ns := s
			ns.b, ns.judged = succ, false
			ns.restart = entersRange(s.b, succ)
			push(n, ns)
		}
	}
	first := newState(pathState{b: start, l: labelNone, valid: true})
	walk(first, max(i, 0)) // i < 0: from the start of the block, no send
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		walk(n, 0)
	}
	return r
}

// succ returns the i'th successor of b, or nil.
func succ(b *cfg.Block, i int) *cfg.Block {
	if i < len(b.Succs) {
		return b.Succs[i]
	}
	return nil
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
