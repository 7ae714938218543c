package analyzer

import (
	"fmt"
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
)

// optSum is what the analyzer can tell about the reconnect buffer that a
// list of connection options (nats.Option values, a []nats.Option, a
// nats.Options value) leaves: Buf and Size as for a Connect, or, when
// Param >= 0, "the options the caller passes in parameter Param decide,
// and Buf/Size when they leave the buffer alone"; with Field, the
// options are in that field of the struct the caller passes there; with
// Adds too, the parameter holds functional options of which some add
// options to that field (optvalues.go). Why
// says why Buf is bufUnknown. It is the payload of optionsFact and
// connectFact. Outer says that Param is a parameter of the declared
// function enclosing the function literal that reads it (connlit.go),
// never set in a fact.
type optSum struct {
	Buf   bufState
	Size  int64
	Param int
	Field string
	Adds  bool
	Why   string
	Outer bool
}

func fixedSum(b bufState, n int64) optSum { return optSum{Buf: b, Size: n, Param: -1} }

func unknownSum(why string) optSum { return optSum{Buf: bufUnknown, Param: -1, Why: why} }

// given resolves s, which may depend on a parameter, with the options the
// caller passes there: what s applies before them, then them.
func (s optSum) given(arg optSum) optSum {
	if s.Param < 0 {
		return s
	}
	before := optSum{Buf: s.Buf, Size: s.Size, Param: -1, Why: s.Why}
	return before.then(arg)
}

// then returns the options of s followed by next: a later setting wins,
// a later option that sets nothing leaves what s set.
func (s optSum) then(next optSum) optSum {
	switch {
	case next.Param >= 0:
		if s.Param >= 0 {
			return unknownSum("options of two parameters")
		}
		if next.Buf == bufDefault {
			next.Buf, next.Size, next.Why = s.Buf, s.Size, s.Why
		}
		return next
	case next.Buf == bufDefault:
		return s
	}
	return next
}

// optionsFact marks an exported function returning connection options
// (nats.Option, []nats.Option or nats.Options) whose reconnect buffer is
// known: set, left alone, or the caller's options in a parameter.
type optionsFact struct{ Sum optSum }

// AFact marks optionsFact as an analysis.Fact.
func (*optionsFact) AFact() {}

func (f *optionsFact) String() string { return "options " + f.Sum.String() }

// connectFact marks an exported function that connects with the options
// its caller passes in a parameter: the connection is judged at its calls.
type connectFact struct{ Sum optSum }

// AFact marks connectFact as an analysis.Fact.
func (*connectFact) AFact() {}

func (f *connectFact) String() string { return "connects with " + f.Sum.String() }

func (s optSum) String() string {
	var what string
	switch s.Buf {
	case bufDisabled:
		what = "buffer disabled"
	case bufSet:
		what = fmt.Sprintf("buffer %d", s.Size)
	case bufUnknown:
		what = "buffer unknown"
	default:
		what = "buffer default"
	}
	switch {
	case s.Param >= 0 && s.Adds:
		return fmt.Sprintf("parameter %d's option values (field %s), else %s", s.Param, s.Field, what)
	case s.Param >= 0 && s.Field != "":
		return fmt.Sprintf("parameter %d's field %s, else %s", s.Param, s.Field, what)
	case s.Param >= 0:
		return fmt.Sprintf("parameter %d's options, else %s", s.Param, what)
	}
	return what
}

// optKind says what a type holds of connection options.
type optKind int

const (
	optNone    optKind = iota
	optOne             // nats.Option
	optList            // []nats.Option
	optOptions         // nats.Options
)

// optionKind returns what of connection options t holds.
func optionKind(t types.Type) optKind {
	if t == nil {
		return optNone
	}
	if s, ok := types.Unalias(t).(*types.Slice); ok {
		if optionKind(s.Elem()) == optOne {
			return optList
		}
		return optNone
	}
	switch {
	case isNamed(t, natsPath, optionType):
		return optOne
	case isNamed(t, natsPath, optionsType):
		return optOptions
	}
	return optNone
}

// connOpts judges connection options in a package: the option
// expressions of each connect, the functions that return options and
// the fields that hold them. Functions and fields are judged once, when
// first asked.
type connOpts struct {
	pass *analysis.Pass
	info *types.Info
	vals *valueIndex
	// fieldStores are the values stored in fields of option type, with
	// the body each store is in; fieldBad fields are changed in place or
	// escape.
	fieldStores map[*types.Var][]optStore
	litStored   map[*types.Var]bool // fields a composite literal sets
	fieldBad    map[*types.Var]string
	fields      map[*types.Var]*optSum
	funcs       map[*types.Func]*optSum
	conns       map[*types.Func]*optSum
	sites       []connectSite                // the connects of the package, in scan order
	ctorUsed    map[*types.Var]bool          // constructor fields passed as a connect's options (ctorConnect)
	ctorSites   map[*ast.CallExpr]*types.Var // each direct connect judged by ctorConnect, and its field or nil
	ctorMode    bool                         // constructor fields stand for "no setting" (ctorConnect)
	ctorHits    map[*types.Var]bool          // the constructor fields read in ctorMode
	judgedLits  map[*ast.FuncLit]bool        // literals whose connects are judged at value calls
}

// optStore is a value stored in a field of option type.
type optStore struct {
	rhs ast.Expr
	fb  *fnBody
}

// busy marks a function or field whose summary is being computed.
var busy = unknownSum("options defined in terms of themselves")

// funcSum judges the options a function returns: every return statement
// of its body agrees, or the fact of another package's function.
func (co *connOpts) funcSum(fn *types.Func) (optSum, bool) {
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil || sig.Results().Len() == 0 || optionKind(sig.Results().At(0).Type()) == optNone {
		return optSum{}, false
	}
	if fn.Pkg() != co.pass.Pkg {
		var f optionsFact
		if co.pass.ImportObjectFact(fn, &f) {
			return f.Sum, true
		}
		return unknownSum(fn.Name() + " of another package, not judged"), true
	}
	if s, ok := co.funcs[fn]; ok {
		return *s, true
	}
	defer co.mode(false)()
	if co.funcs == nil {
		co.funcs = make(map[*types.Func]*optSum)
	}
	co.funcs[fn] = &busy
	s := co.judgeReturns(fn)
	co.funcs[fn] = &s
	return s, true
}

func (co *connOpts) judgeReturns(fn *types.Func) optSum {
	fb := co.vals.byFunc[fn]
	if fb == nil {
		return unknownSum(fn.Name() + " has no body")
	}
	var sum optSum
	n := 0
	bad := ""
	ast.Inspect(fb.body, func(node ast.Node) bool {
		switch r := node.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			if bad != "" {
				return false
			}
			if len(r.Results) == 0 {
				bad = fn.Name() + " returns named results"
				return false
			}
			var s optSum
			if len(r.Results) == 1 && len(r.Results) < fb.typ.Results.NumFields() {
				// return nats.NkeyOptionFromSeed(path): the option of a
				// call returning it with an error.
				call, _ := ast.Unparen(r.Results[0]).(*ast.CallExpr)
				k := tupleOptionKind(co.info, call)
				if k == optNone {
					bad = fn.Name() + " returns another call's results"
					return false
				}
				s = co.callExprSum(fb, call, k)
			} else if isNil(co.info, r.Results[0]) {
				return false // return nil, err: a failed build, not a connect
			} else {
				s = co.exprSum(fb, r.Results[0])
			}
			switch {
			case s.Buf == bufUnknown:
				bad = s.Why
			case n > 0 && s != sum:
				bad = fn.Name() + " returns different options"
			}
			sum = s
			n++
		}
		return true
	})
	if bad != "" {
		return unknownSum(bad)
	}
	if n == 0 {
		return unknownSum(fn.Name() + " returns no options")
	}
	return sum
}

// tupleOptionKind returns the option kind of the first result of call, a
// call of a function returning options and more (an error), or optNone.
func tupleOptionKind(info *types.Info, call *ast.CallExpr) optKind {
	if call == nil {
		return optNone
	}
	t, ok := info.TypeOf(call).(*types.Tuple)
	if !ok || t.Len() < 2 {
		return optNone
	}
	return optionKind(t.At(0).Type())
}

// paramIndex returns the index of v among the parameters of the function
// (declaration or literal) of fb, or -1.
func (co *connOpts) paramIndex(fb *fnBody, v *types.Var) int {
	if fb == nil || v == nil {
		return -1
	}
	var sig *types.Signature
	switch {
	case fb.self != nil:
		sig, _ = fb.self.Type().(*types.Signature)
	case fb.lit != nil:
		sig, _ = co.info.TypeOf(fb.lit).(*types.Signature)
	}
	if sig == nil {
		return -1
	}
	for i := range sig.Params().Len() {
		if sig.Params().At(i) == v {
			return i
		}
	}
	return -1
}

// callSum judges the options a call of a function returning options, or
// of a function that connects with its caller's options (conn), yields,
// with the arguments the call passes.
func (co *connOpts) callSum(fb *fnBody, call *ast.CallExpr, s optSum) optSum {
	if s.Param < 0 {
		return s
	}
	sig := sigOf(co.info, call.Fun)
	if sig == nil || s.Param >= sig.Params().Len() {
		return unknownSum("options passed in a way not followed")
	}
	var arg optSum
	switch {
	case s.Adds:
		arg = co.valuesArg(fb, call, sig, s.Param, s.Field)
	case s.Field != "":
		if s.Param >= len(call.Args) || sig.Variadic() && s.Param == sig.Params().Len()-1 {
			return unknownSum("options passed in a way not followed")
		}
		arg = co.fieldArgSum(fb, call.Args[s.Param], s.Field)
	case sig.Variadic() && s.Param == sig.Params().Len()-1:
		args := call.Args[min(s.Param, len(call.Args)):]
		if call.Ellipsis.IsValid() {
			arg = co.exprSum(fb, args[len(args)-1])
		} else {
			arg = co.seqSum(fb, args)
		}
	case s.Param < len(call.Args):
		arg = co.exprSum(fb, call.Args[s.Param])
	default:
		return unknownSum("options passed in a way not followed")
	}
	return s.given(arg)
}

// seqSum judges options applied in order.
func (co *connOpts) seqSum(fb *fnBody, elems []ast.Expr) optSum {
	sum := fixedSum(bufDefault, 0)
	for _, e := range elems {
		sum = sum.then(co.exprSum(fb, e))
	}
	return sum
}
