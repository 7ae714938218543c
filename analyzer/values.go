package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/analysis"
)

// valueIndex is what the scan learns about the values of a package's
// variables, for the checks that follow a value to where it came from:
// the function bodies (declarations and literals), the local variables
// bound once to a function literal (closureOf), the values assigned to
// local variables and unexported fields of function or interface type
// (valuesOf: an interface method called on a *nats.Conn, a send through
// a function variable), and the expression a variable is defined from
// (def: ok := err == nil). The scan fills it, once per pass, from the
// package's store list (note, litField), which it also holds; the send
// index, the error-flow labels, the ID check, the connect check (option
// slices) and the retry check (the bodies) read it.
type valueIndex struct {
	info  *types.Info
	fset  *token.FileSet
	files map[*token.File]*ast.File

	bodies    map[*ast.BlockStmt]*fnBody
	list      []*fnBody                   // the bodies in the order added: source order
	byScope   map[*types.Scope]*fnBody    // the bodies by their function's scope
	byFunc    map[*types.Func]*fnBody     // the declarations' bodies by function
	scopeless bool                        // a body's scope is not known: bodyOf searches
	closures  map[*types.Var]*ast.FuncLit // local variables bound once to a function literal
	assigned  map[*types.Var]int          // assignments to each variable (taking its address counts twice)
	funcVals  map[*types.Var][]ast.Expr   // the values assigned to local variables of function or interface type
	fieldVals map[*types.Var][]ast.Expr   // the values stored in unexported fields of function or interface type
	fieldBad  map[*types.Var]bool         // such fields stored in a way not followed (address taken)
	defs      map[*types.Var]ast.Expr     // local variables defined (:=) from an expression
	stores    storeList                   // every store of the package, for the bodies' indexes
}

// fnBody is a function body (declaration or literal) with calls that may
// matter to the retry check.
type fnBody struct {
	body  *ast.BlockStmt
	self  *types.Func   // the declared function, for recursion; nil for a literal
	lit   *ast.FuncLit  // the literal, nil for a declaration
	typ   *ast.FuncType // the function's type
	calls []*ast.CallExpr
	loops bool // contains a for, range or goto
	// stores holds the body's stores from index from on (indexOf).
	stores *storeList
	from   int
	idx    *assignIndex // lazily
	cfg    *bodyCFG     // lazily
	// reschedules: the body calls time.AfterFunc (outside literals)
	reschedules bool
	goes        bool // the body has a go statement (outside literals)
}

// newValueIndex returns an empty index for the package of pass, whose
// files are files.
func newValueIndex(pass *analysis.Pass, files map[*token.File]*ast.File) *valueIndex {
	return &valueIndex{
		info:      pass.TypesInfo,
		fset:      pass.Fset,
		files:     files,
		bodies:    make(map[*ast.BlockStmt]*fnBody),
		byScope:   make(map[*types.Scope]*fnBody),
		byFunc:    make(map[*types.Func]*fnBody),
		closures:  make(map[*types.Var]*ast.FuncLit),
		assigned:  make(map[*types.Var]int),
		funcVals:  make(map[*types.Var][]ast.Expr),
		fieldVals: make(map[*types.Var][]ast.Expr),
		fieldBad:  make(map[*types.Var]bool),
		defs:      make(map[*types.Var]ast.Expr),
	}
}

// tracksValues reports whether the values assigned to v are recorded: a
// variable of function or interface type.
func tracksValues(v *types.Var) bool {
	switch v.Type().Underlying().(type) {
	case *types.Signature, *types.Interface:
		return true
	}
	return false
}

// note indexes the store a, as the scan records it: to a local variable
// (how often each is assigned, function literals bound to them, the
// values of those of function or interface type, what := defines them
// from) or to an unexported field of function or interface type, whose
// address, when taken, makes it not followed. x++ and x-- are not noted.
func (vi *valueIndex) note(a *assignment) {
	switch a.node.(type) {
	case *ast.AssignStmt:
		if f := vi.trackedField(a.lhs); f != nil {
			if a.rhs != nil {
				vi.fieldVals[f] = append(vi.fieldVals[f], a.rhs)
			} else {
				vi.fieldBad[f] = true
			}
		}
		id, ok := a.lhs.(*ast.Ident)
		if !ok {
			return
		}
		v, ok := vi.info.ObjectOf(id).(*types.Var)
		if !ok {
			return
		}
		vi.assigned[v]++
		if a.rhs != nil {
			vi.boundTo(v, a.rhs)
			if a.tok == token.DEFINE {
				vi.defs[v] = a.rhs
			}
		}
	case *ast.ValueSpec:
		v, ok := vi.info.Defs[a.lhs.(*ast.Ident)].(*types.Var)
		if !ok {
			return
		}
		if a.rhs == nil && a.tuple == nil && tracksValues(v) {
			return // var f func() error: nil until assigned
		}
		vi.assigned[v]++
		if a.rhs != nil {
			vi.boundTo(v, a.rhs)
		}
	case *ast.UnaryExpr:
		if f := vi.trackedField(a.lhs); f != nil {
			vi.fieldBad[f] = true
		}
		if id, ok := ast.Unparen(a.lhs).(*ast.Ident); ok {
			if v, ok := vi.info.Uses[id].(*types.Var); ok {
				vi.assigned[v] += 2 // its address escapes
			}
		}
	}
}

// boundTo notes the value rhs assigned to v one to one: a function
// literal, and a value of function or interface type.
func (vi *valueIndex) boundTo(v *types.Var, rhs ast.Expr) {
	if lit, ok := ast.Unparen(rhs).(*ast.FuncLit); ok {
		vi.closures[v] = lit
	}
	if tracksValues(v) {
		vi.funcVals[v] = append(vi.funcVals[v], rhs)
	}
}

// litField notes the value a composite literal stores in the field f.
func (vi *valueIndex) litField(f *types.Var, val ast.Expr) {
	if !f.Exported() && tracksValues(f) {
		vi.fieldVals[f] = append(vi.fieldVals[f], val)
	}
}

// trackedField returns the unexported field of function or interface type
// that the selector e denotes, or nil.
func (vi *valueIndex) trackedField(e ast.Expr) *types.Var {
	f := fieldOf(vi.info, e)
	if f == nil || f.Exported() || !tracksValues(f) {
		return nil
	}
	return f
}

// fieldOf returns the struct field that the selector e (x.f) denotes, or
// nil: the target of a field store, for the value index and the option
// fields.
func fieldOf(info *types.Info, e ast.Expr) *types.Var {
	sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	s := info.Selections[sel]
	if s == nil || s.Kind() != types.FieldVal {
		return nil
	}
	f, _ := s.Obj().(*types.Var)
	return f
}

// litFields calls store with each field a struct literal sets and its
// value (keyed or positional); a literal of another type sets none.
func litFields(info *types.Info, n *ast.CompositeLit, store func(f *types.Var, val ast.Expr)) {
	t := info.TypeOf(n)
	if t == nil {
		return
	}
	str, ok := t.Underlying().(*types.Struct)
	if !ok {
		return
	}
	for i, elt := range n.Elts {
		var f *types.Var
		val := elt
		if kv, ok := elt.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok {
				f, _ = info.Uses[k].(*types.Var)
			}
			val = kv.Value
		} else if i < str.NumFields() {
			f = str.Field(i)
		}
		if f != nil {
			store(f, val)
		}
	}
}

// valuesOf returns the values stored in the variable or unexported field
// that e denotes, when every store is known.
func (vi *valueIndex) valuesOf(e ast.Expr) ([]ast.Expr, bool) {
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		v, ok := vi.info.Uses[x].(*types.Var)
		if !ok {
			return nil, false
		}
		return vi.funcValues(v)
	case *ast.SelectorExpr:
		s := vi.info.Selections[x]
		if s == nil || s.Kind() != types.FieldVal {
			return nil, false
		}
		f, _ := s.Obj().(*types.Var)
		if f == nil || f.Exported() || vi.fieldBad[f] || len(vi.fieldVals[f]) == 0 {
			return nil, false
		}
		return vi.fieldVals[f], true
	}
	return nil, false
}

// def returns the expression the local variable v is defined from (v :=
// e), when that is its only assignment, or nil.
func (vi *valueIndex) def(v *types.Var) ast.Expr {
	if vi.assigned[v] != 1 {
		return nil
	}
	return vi.defs[v]
}

// funcValues returns the values assigned to the local variable v of
// function or interface type, when every assignment is one of them.
func (vi *valueIndex) funcValues(v *types.Var) ([]ast.Expr, bool) {
	vals := vi.funcVals[v]
	if len(vals) == 0 || vi.assigned[v] != len(vals) {
		return nil, false
	}
	return vals, true
}

// dropReassigned forgets the function literals bound to variables that
// are assigned more than once: closureOf follows a variable assigned
// exactly once only. It runs after the scan.
func (vi *valueIndex) dropReassigned() {
	for v, n := range vi.assigned {
		if n != 1 {
			delete(vi.closures, v)
		}
	}
}

// closureOf returns the function literal e denotes: a literal, possibly
// converted to a named function type (backoff.Operation(func() ...)), or a
// local variable assigned exactly once, from a function literal.
func (vi *valueIndex) closureOf(e ast.Expr) *ast.FuncLit {
	e = ast.Unparen(e)
	switch x := e.(type) {
	case *ast.FuncLit:
		return x
	case *ast.CallExpr:
		if tv, ok := vi.info.Types[x.Fun]; ok && tv.IsType() && len(x.Args) == 1 {
			return vi.closureOf(x.Args[0])
		}
		return nil
	case *ast.Ident:
		v, ok := vi.info.Uses[x].(*types.Var)
		if !ok {
			return nil
		}
		return vi.closures[v]
	}
	return nil
}

// valuesAssigned calls f with the value of each assignment of the whole
// variable v in body (function literals included).
func (vi *valueIndex) valuesAssigned(body *ast.BlockStmt, v *types.Var, f func(rhs ast.Expr)) {
	fb := vi.bodies[body]
	if fb == nil || v == nil {
		return
	}
	for _, a := range indexOf(fb).byVar[v] {
		if a.whole && a.rhs != nil {
			f(a.rhs)
		}
	}
}
