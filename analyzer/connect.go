package analyzer

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
)

// bufState is what the analyzer can tell about a connection's reconnect
// buffer.
type bufState int

const (
	bufDefault  bufState = iota // visible, reconnect buffering left at its default (8 MiB)
	bufDisabled                 // ReconnectBufSize(-1), or reconnecting disabled
	bufSet                      // set to a non-negative constant (0 also means 8 MiB)
	bufUnknown                  // something the analyzer cannot see may set it
)

const reconnectWhy = "a buffered request goes out after its timeout"

// connectSite is a call that connects: nats.Connect, (nats.Options).Connect,
// or a function that connects with the options its caller passes (via, or
// a function value every value of which does: value).
type connectSite struct {
	call    *ast.CallExpr
	fb      *fnBody
	options bool
	via     *types.Func
	value   bool
}

// addValueCall records a call of a function value taking connection
// options (pool.connectFunc(addr, opts...)): a connect if the values it
// holds connect with them.
func (co *connOpts) addValueCall(call *ast.CallExpr, fb *fnBody) {
	sig := sigOf(co.info, call.Fun)
	if sig == nil || !hasOptionParamSig(sig) {
		return
	}
	co.sites = append(co.sites, connectSite{call: call, fb: fb, value: true})
}

// addConnect records a call that may connect (the scan calls it): a
// connect API, or a call of a function with a parameter of option type,
// which connects if it passes them on to a connect (judged after the scan).
func (co *connOpts) addConnect(call *ast.CallExpr, fn *types.Func, fb *fnBody) {
	if options, ok := isConnect(fn); ok {
		co.sites = append(co.sites, connectSite{call: call, fb: fb, options: options})
		return
	}
	if fn.Pkg() == nil || isNATSPackage(fn.Pkg().Path()) || !hasOptionParam(fn) {
		return
	}
	if fn.Pkg() != co.pass.Pkg && !co.pass.ImportObjectFact(fn, new(connectFact)) {
		return
	}
	co.sites = append(co.sites, connectSite{call: call, fb: fb, via: fn})
}

// hasOptionParam reports whether fn takes connection options.
func hasOptionParam(fn *types.Func) bool {
	sig, _ := fn.Type().(*types.Signature)
	return sig != nil && hasOptionParamSig(sig)
}

func hasOptionParamSig(sig *types.Signature) bool {
	for i := range sig.Params().Len() {
		if t := sig.Params().At(i).Type(); optionKind(t) != optNone || hasOptionField(t) || isValueList(t) {
			return true
		}
	}
	return false
}

// siteSum judges the options of one connect.
func (co *connOpts) siteSum(s connectSite) optSum {
	call := s.call
	switch {
	case s.value:
		sum, ok := co.valueConnects(call.Fun)
		if !ok {
			return fixedSum(bufDisabled, 0) // not a connect, or not followed
		}
		return co.callSum(s.fb, call, sum)
	case s.via != nil:
		sum, ok := co.connectsOf(s.via)
		if !ok {
			return fixedSum(bufDisabled, 0) // not a connect after all
		}
		return co.callSum(s.fb, call, sum)
	}
	if co.ctorConnect(s) {
		return fixedSum(bufDisabled, 0) // judged at the constructor's calls
	}
	return co.directSum(s)
}

// directSum judges the options of a call of nats.Connect or
// (nats.Options).Connect.
func (co *connOpts) directSum(s connectSite) optSum {
	call := s.call
	if s.options {
		sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
		if !ok {
			return unknownSum("a method value")
		}
		x := ast.Unparen(sel.X)
		if u, ok := x.(*ast.UnaryExpr); ok && u.Op == token.AND {
			x = u.X
		}
		return co.exprSum(s.fb, x)
	}
	args := call.Args[min(1, len(call.Args)):]
	if call.Ellipsis.IsValid() && len(args) > 0 {
		return co.seqSum(s.fb, args[:len(args)-1]).then(co.exprSum(s.fb, args[len(args)-1]))
	}
	return co.seqSum(s.fb, args)
}

// connectsOf returns how the function fn of the package connects with
// its caller's options, if it does: the first of its connects that depends
// on a parameter; for another package's function, its connectFact.
func (co *connOpts) connectsOf(fn *types.Func) (optSum, bool) {
	if fn.Pkg() != co.pass.Pkg {
		var f connectFact
		ok := co.pass.ImportObjectFact(fn, &f)
		return f.Sum, ok
	}
	if s, ok := co.conns[fn]; ok {
		return *s, s.Param >= 0
	}
	defer co.mode(false)()
	if co.conns == nil {
		co.conns = make(map[*types.Func]*optSum)
	}
	co.conns[fn] = &busy
	found := fixedSum(bufDisabled, 0)
	if i, ok := co.ctorParam(fn); ok {
		// A constructor keeping its caller's options in a field that a
		// connect reads: its calls are the connects.
		found = optSum{Buf: bufDefault, Param: i}
		co.conns[fn] = &found
		return found, true
	}
	for _, s := range co.sites {
		// Also a connect in a literal with fn's caller's options.
		outer := s.fb != nil && s.fb.lit != nil && co.enclosing(s.fb) == fn
		if s.fb == nil || s.fb.self != fn && !outer {
			continue
		}
		if sum := co.siteSum(s); sum.Param >= 0 && sum.Outer == outer {
			sum.Outer = false
			found = sum
			break
		}
	}
	co.conns[fn] = &found
	return found, found.Param >= 0
}

// valueConnects returns how the function values e holds connect with
// their caller's options: every value is a function literal or a function,
// and those that connect (not a test's stub) do it the same way. The
// literals so followed are marked judged.
func (co *connOpts) valueConnects(e ast.Expr) (optSum, bool) {
	vals, ok := co.vals.valuesOf(e)
	if !ok {
		return optSum{}, false
	}
	var sum optSum
	var lits []*ast.FuncLit
	n := 0
	for _, v := range vals {
		var s optSum
		switch v := ast.Unparen(v).(type) {
		case *ast.FuncLit:
			s, ok = co.litConnects(v)
			lits = append(lits, v)
		default:
			fn, isFn := objectOf(co.info, v).(*types.Func)
			if !isFn {
				return optSum{}, false
			}
			s, ok = co.connectsOf(fn)
		}
		if !ok {
			continue // a value that does not connect
		}
		if n > 0 && s != sum {
			return optSum{}, false
		}
		sum = s
		n++
	}
	if n == 0 {
		return optSum{}, false
	}
	for _, lit := range lits {
		co.judgedLits[lit] = true
	}
	return sum, true
}

// litConnects returns how the function literal lit connects with its
// caller's options, if it does.
func (co *connOpts) litConnects(lit *ast.FuncLit) (optSum, bool) {
	for _, s := range co.sites {
		if s.fb != nil && s.fb.lit == lit {
			if sum := co.siteSum(s); sum.Param >= 0 && !sum.Outer {
				return sum, true
			}
		}
	}
	return optSum{}, false
}

// checkConnects reports the connects that leave outgoing reconnect
// buffering on, after the scan: a connect whose options come from the
// caller is judged at the calls of its function (here, and in other
// packages through a connectFact); one the analyzer cannot judge is listed
// with -audit (category unjudged).
func (st *state) checkConnects() {
	co := st.conn
	co.judgedLits = make(map[*ast.FuncLit]bool)
	sums := make([]optSum, len(co.sites))
	// The connects themselves first: they say which constructors' calls
	// connect (ctorConnect), before those calls are judged.
	for _, direct := range []bool{true, false} {
		for i, s := range co.sites {
			if (s.via == nil && !s.value) == direct {
				sums[i] = co.siteSum(s)
			}
		}
	}
	for i, s := range co.sites {
		sum := sums[i]
		api, name := "nats.Connect", "nats.Connect"
		switch {
		case s.via != nil:
			name = "call of " + s.via.Name()
			api = name + " connects"
		case s.value:
			name = "call of " + types.ExprString(s.call.Fun)
			api = name + " connects"
		case s.options:
			api, name = "(nats.Options).Connect", "(nats.Options).Connect"
		}
		if fn, param, f := co.ctorOf(s.call); fn != nil {
			st.rep.delegated(s.call, name+" to the calls of exported "+fn.Name()+": its options come from parameter "+param+", kept in field "+f.Name())
			continue
		}
		if sum.Param >= 0 {
			if sum.Outer {
				// A literal's connect with the options of the enclosing
				// function's caller: judged at that function's calls.
				if fn := co.enclosing(s.fb); fn != nil && fn.Exported() {
					sum.Outer = false
					st.delegate(s, name, fn, sum)
				}
				continue
			}
			if s.fb.lit != nil {
				if !co.judgedLits[s.fb.lit] {
					st.rep.unjudged(s.call, name+": its options come from the caller of "+st.vals.litName(st.pass.Pkg, st.pass.Fset, s.fb.lit)+", whose calls are not followed")
				}
				continue
			}
			if fn := s.fb.self; fn.Exported() {
				st.delegate(s, name, fn, sum)
			}
			continue
		}
		var msg string
		switch sum.Buf {
		case bufDefault:
			switch {
			case s.via != nil || s.value:
				msg = fmt.Sprintf("%s without nats.ReconnectBufSize(-1): %s; use shim.Connect", api, reconnectWhy)
			case s.options:
				msg = fmt.Sprintf("%s leaves ReconnectBufSize at its default (8 MiB): %s; use shim.Connect", api, reconnectWhy)
			default:
				msg = fmt.Sprintf("%s without nats.ReconnectBufSize(-1) keeps the reconnect buffer: %s; use shim.Connect", api, reconnectWhy)
			}
		case bufSet:
			msg = fmt.Sprintf("%s with ReconnectBufSize(%d) still buffers (-1 disables it): %s; use shim.Connect", api, sum.Size, reconnectWhy)
		case bufUnknown:
			st.rep.unjudged(s.call, name+": "+sum.Why)
			continue
		default:
			continue
		}
		st.rep.add(&finding{
			category: CategoryReconnectBuf,
			pos:      s.call.Pos(),
			end:      s.call.End(),
			api:      name,
			message:  msg,
			report:   st.rep.reported(CategoryReconnectBuf),
		})
	}
	for _, fb := range co.vals.list {
		if fn := fb.self; fn != nil && fn.Exported() {
			if i, ok := co.ctorParam(fn); ok {
				st.pass.ExportObjectFact(fn, &connectFact{Sum: optSum{Buf: bufDefault, Param: i}})
			}
		}
	}
	co.exportOptionFacts()
}

// delegate exports the connectFact of the exported function fn whose
// connect s takes its options from fn's caller (sum), so that each call
// of fn in analyzed code is judged, and lists s as delegated; a connect
// that does not stand for fn's calls (another of fn's connects does, see
// connectsOf) stays unjudged.
func (st *state) delegate(s connectSite, name string, fn *types.Func, sum optSum) {
	first, _ := st.conn.connectsOf(fn)
	sig, _ := fn.Type().(*types.Signature)
	switch {
	case first != sum:
		st.rep.unjudged(s.call, name+": its options come from the caller of exported "+fn.Name()+", whose calls are judged by another of its connects")
		return
	case !hasOptionParam(fn) || sig == nil || sum.Param >= sig.Params().Len():
		st.rep.unjudged(s.call, name+": its options come from the caller of exported "+fn.Name()+", whose calls are not followed")
		return
	}
	st.pass.ExportObjectFact(fn, &connectFact{Sum: sum})
	if recv := sig.Recv(); recv != nil && !exportedOwner(recv.Type()) {
		// Other packages call it through an interface, which is not
		// followed.
		st.rep.unjudged(s.call, name+": its options come from the caller of "+fn.Name()+", a method of an unexported type, called through interfaces")
		return
	}
	from := "parameter " + sig.Params().At(sum.Param).Name()
	switch {
	case sum.Adds:
		from = "the option values in " + from
	case sum.Field != "":
		from = "field " + sum.Field + " of " + from
	}
	st.rep.delegated(s.call, name+" to the calls of exported "+fn.Name()+": its options come from "+from)
}

// exportOptionFacts exports an optionsFact for each exported function of
// the package that returns options the analyzer can judge.
func (co *connOpts) exportOptionFacts() {
	for _, fb := range co.vals.list {
		fn := fb.self
		if fn == nil || !fn.Exported() {
			continue
		}
		if s, ok := co.funcSum(fn); ok && s.Buf != bufUnknown {
			co.pass.ExportObjectFact(fn, &optionsFact{Sum: s})
		}
	}
}
