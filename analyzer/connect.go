package analyzer

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"slices"
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

// checkConnect reports nats.Connect and (nats.Options).Connect calls that
// leave outgoing reconnect buffering on. Only what is visible at the call is
// judged: a spread option slice not built in the function, an option built by another function, an
// Options value that is a parameter or escapes by address all make the
// state unknown, and unknown is not reported.
func (st *state) checkConnect(call *ast.CallExpr, options bool, stack []ast.Node) {
	var state bufState
	var size int64
	var api string
	if options {
		api = "(nats.Options).Connect"
		sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
		if !ok {
			return
		}
		state, size = optionsValue(st.vals, sel.X, stack)
	} else {
		api = "nats.Connect"
		args := call.Args[min(1, len(call.Args)):]
		if call.Ellipsis.IsValid() {
			// opts := []nats.Option{...}; opts = append(opts, ...);
			// nats.Connect(url, opts...): the elements built here.
			elems, ok := optionSlice(st.vals, args[len(args)-1])
			if !ok {
				return
			}
			args = append(args[:len(args)-1:len(args)-1], elems...)
		}
		state, size = bufDefault, 0
		for _, arg := range args {
			s, n := optionArg(st.info, arg)
			if s == bufUnknown {
				return
			}
			if s != bufDefault {
				state, size = s, n
			}
		}
	}
	var msg string
	switch state {
	case bufDefault:
		if options {
			msg = fmt.Sprintf("%s leaves ReconnectBufSize at its default (8 MiB): %s; use shim.Connect", api, reconnectWhy)
		} else {
			msg = fmt.Sprintf("%s without nats.ReconnectBufSize(-1) keeps the reconnect buffer: %s; use shim.Connect", api, reconnectWhy)
		}
	case bufSet:
		msg = fmt.Sprintf("%s with ReconnectBufSize(%d) still buffers (-1 disables it): %s; use shim.Connect", api, size, reconnectWhy)
	default:
		return
	}
	st.rep.add(&finding{
		category: CategoryReconnectBuf,
		pos:      call.Pos(),
		end:      call.End(),
		api:      api,
		message:  msg,
		report:   st.rep.reported(CategoryReconnectBuf),
	})
}

// intConst returns the constant integer value of e, if it has one.
func intConst(info *types.Info, e ast.Expr) (int64, bool) {
	tv, ok := info.Types[e]
	if !ok || tv.Value == nil {
		return 0, false
	}
	v, exact := constant.Int64Val(constant.ToInt(tv.Value))
	return v, exact
}

// optionArg classifies one nats.Option argument of nats.Connect.
func optionArg(info *types.Info, arg ast.Expr) (bufState, int64) {
	switch e := ast.Unparen(arg).(type) {
	case *ast.CallExpr:
		fn := calleeFunc(info, e)
		if fn == nil || fn.Pkg() == nil || fn.Pkg().Path() != natsPath {
			return bufUnknown, 0
		}
		switch funcKey(fn) {
		case reconnectBufOption:
			if len(e.Args) != 1 {
				return bufUnknown, 0
			}
			n, ok := intConst(info, e.Args[0])
			if !ok {
				return bufUnknown, 0
			}
			if n < 0 {
				return bufDisabled, n
			}
			return bufSet, n
		case noReconnectOption:
			return bufDisabled, 0
		}
		return bufDefault, 0
	case *ast.FuncLit:
		return assignedBuf(info, e.Body)
	}
	return bufUnknown, 0
}

// optState tracks a nats.Options value: whether reconnecting is allowed
// and what its ReconnectBufSize is.
type optState struct {
	allow tri
	buf   bufState
	size  int64
}

// tri is a boolean that may be unknown.
type tri int

const (
	triUnknown tri = iota
	triFalse
	triTrue
)

// result turns an optState into the state of the reconnect buffer.
func (o optState) result() (bufState, int64) {
	switch {
	case o.allow == triFalse:
		return bufDisabled, 0
	case o.allow == triUnknown || o.buf == bufUnknown:
		return bufUnknown, 0
	}
	return o.buf, o.size
}

// assignOption applies one assignment of expr to the named Options field.
func assignOption(info *types.Info, o *optState, field string, expr ast.Expr) {
	switch field {
	case reconnectBufField:
		n, ok := intConst(info, expr)
		switch {
		case !ok:
			o.buf = bufUnknown
		case n < 0:
			o.buf, o.size = bufDisabled, n
		default:
			o.buf, o.size = bufSet, n
		}
	case allowReconnectField:
		tv := info.Types[expr]
		switch {
		case tv.Value == nil || tv.Value.Kind() != constant.Bool:
			o.allow = triUnknown
		case constant.BoolVal(tv.Value):
			o.allow = triTrue
		default:
			o.allow = triFalse
		}
	}
}

// assignOptions applies, in source order, the assignments in body to the
// ReconnectBufSize and AllowReconnect fields of any value.
func assignOptions(info *types.Info, o *optState, body ast.Node) {
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok {
			return true
		}
		for i, lhs := range as.Lhs {
			if sel, ok := ast.Unparen(lhs).(*ast.SelectorExpr); ok {
				assignField(info, o, as, sel, i)
			}
		}
		return true
	})
}

// assignField applies the assignment as of its i'th target, the field sel,
// if it is ReconnectBufSize or AllowReconnect.
func assignField(info *types.Info, o *optState, as *ast.AssignStmt, sel *ast.SelectorExpr, i int) {
	if sel.Sel.Name != reconnectBufField && sel.Sel.Name != allowReconnectField {
		return
	}
	if len(as.Rhs) != len(as.Lhs) || as.Tok != token.ASSIGN {
		o.buf = bufUnknown
		return
	}
	assignOption(info, o, sel.Sel.Name, as.Rhs[i])
}

// assignedBuf classifies a function literal used as a nats.Option.
func assignedBuf(info *types.Info, body ast.Node) (bufState, int64) {
	o := optState{allow: triTrue, buf: bufDefault}
	assignOptions(info, &o, body)
	return o.result()
}

// optionsValue classifies the nats.Options value whose Connect method is
// called: a composite literal, nats.GetDefaultOptions(), or a local
// variable initialized from one of them in the enclosing function.
func optionsValue(vi *valueIndex, x ast.Expr, stack []ast.Node) (bufState, int64) {
	info := vi.info
	x = ast.Unparen(x)
	if u, ok := x.(*ast.UnaryExpr); ok && u.Op == token.AND {
		x = ast.Unparen(u.X)
	}
	switch e := x.(type) {
	case *ast.CompositeLit, *ast.CallExpr:
		return optionsInit(info, e).result()
	case *ast.Ident:
		v, ok := info.Uses[e].(*types.Var)
		if !ok {
			return bufUnknown, 0
		}
		fb := vi.innermost(stack)
		if fb == nil || v.Pos() < fb.body.Pos() || v.Pos() >= fb.body.End() {
			return bufUnknown, 0 // a parameter, global or captured variable
		}
		return localOptions(info, fb, v)
	}
	return bufUnknown, 0
}

// localOptions classifies a local nats.Options variable v declared in the
// body fb: its initializer, then assignments to its fields in source order
// (from the body's assignment index). Taking its address or assigning it
// again makes the state unknown.
func localOptions(info *types.Info, fb *fnBody, v *types.Var) (bufState, int64) {
	idx := indexOf(info, fb)
	if idx.whole[v] {
		return bufUnknown, 0 // its address escapes
	}
	o := optState{}
	inits := 0
	for _, a := range idx.byVar[v] {
		if !a.whole {
			continue
		}
		inits++
		switch n := a.node.(type) {
		case *ast.AssignStmt:
			o = optState{}
			if a.rhs != nil {
				o = optionsInit(info, a.rhs)
			}
		case *ast.ValueSpec:
			switch {
			case a.rhs != nil:
				o = optionsInit(info, a.rhs)
			case len(n.Values) == 0:
				o = optState{allow: triFalse, buf: bufDefault} // zero Options
			}
		}
	}
	if inits != 1 {
		return bufUnknown, 0
	}
	for _, a := range idx.byVar[v] {
		as, ok := a.node.(*ast.AssignStmt)
		if !ok {
			continue
		}
		sel, ok := ast.Unparen(a.lhs).(*ast.SelectorExpr)
		if !ok {
			continue
		}
		if id, ok := ast.Unparen(sel.X).(*ast.Ident); !ok || info.Uses[id] != v {
			continue
		}
		assignField(info, &o, as, sel, slices.Index(as.Lhs, a.lhs))
	}
	return o.result()
}

// optionsInit classifies an expression of type nats.Options: a composite
// literal, whose omitted fields are zero (AllowReconnect false), or
// nats.GetDefaultOptions(), which allows reconnecting with the default
// buffer.
func optionsInit(info *types.Info, e ast.Expr) optState {
	switch e := ast.Unparen(e).(type) {
	case *ast.CompositeLit:
		o := optState{allow: triFalse, buf: bufDefault}
		for _, elt := range e.Elts {
			kv, ok := elt.(*ast.KeyValueExpr)
			if !ok {
				return optState{} // positional literal: not worth guessing
			}
			if key, ok := kv.Key.(*ast.Ident); ok {
				assignOption(info, &o, key.Name, kv.Value)
			}
		}
		return o
	case *ast.CallExpr:
		if fn := calleeFunc(info, e); funcKey(fn) == defaultOptionsFunc {
			return optState{allow: triTrue, buf: bufDefault}
		}
	}
	return optState{}
}

// optionSlice returns the options a local slice variable is built from in
// its function: the elements of its literals and of append(opts, ...) to
// itself, in source order. Any other assignment, an element assignment or
// its address taken makes it unknown.
func optionSlice(vi *valueIndex, e ast.Expr) ([]ast.Expr, bool) {
	v := localVar(vi.info, e)
	body := vi.bodyOf(v)
	if v == nil || body == nil || v.Pos() < body.Pos() || v.Pos() >= body.End() {
		return nil, false // a parameter: built elsewhere
	}
	var elems []ast.Expr
	ok, assigned := true, false
	vi.valuesAssigned(body, v, func(rhs ast.Expr) {
		assigned = true
		switch r := ast.Unparen(rhs).(type) {
		case *ast.CompositeLit:
			elems = append(elems, r.Elts...)
			return
		case *ast.CallExpr:
			if id, isIdent := ast.Unparen(r.Fun).(*ast.Ident); isIdent && id.Name == "append" && len(r.Args) > 0 &&
				localVar(vi.info, r.Args[0]) == v && !r.Ellipsis.IsValid() {
				elems = append(elems, r.Args[1:]...)
				return
			}
		}
		ok = false
	})
	if fb := vi.bodies[body]; fb == nil || indexOf(vi.info, fb).addressed[v] {
		ok = false
	} else {
		for _, a := range indexOf(vi.info, fb).byVar[v] {
			ok = ok && a.whole // opts[i] = x
			if a.rhs == nil {
				// opts, err := cfg.options(): built by another function.
				switch n := a.node.(type) {
				case *ast.AssignStmt:
					ok = false
				case *ast.ValueSpec:
					ok = ok && len(n.Values) == 0 // var opts []nats.Option
				}
			}
		}
	}
	return elems, ok && assigned
}
