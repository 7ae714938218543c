package analyzer

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
)

// The reconnect buffer as options set it: the constant an option or a
// field assignment gives ReconnectBufSize and AllowReconnect (optState),
// read from option calls, function-literal options and nats.Options
// values, for the connect check (connect.go).

// intConst returns the constant integer value of e, if it has one.
func intConst(info *types.Info, e ast.Expr) (int64, bool) {
	tv, ok := info.Types[e]
	if !ok || tv.Value == nil {
		return 0, false
	}
	v, exact := constant.Int64Val(constant.ToInt(tv.Value))
	return v, exact
}

// optionArg classifies one nats.Option argument of nats.Connect, a call
// of a nats.go option function.
func optionArg(info *types.Info, call *ast.CallExpr) (bufState, int64) {
	fn := calleeFunc(info, call)
	if fn == nil || fn.Pkg() == nil || fn.Pkg().Path() != natsPath {
		return bufUnknown, 0
	}
	switch funcKey(fn) {
	case reconnectBufOption:
		if len(call.Args) != 1 {
			return bufUnknown, 0
		}
		n, ok := intConst(info, call.Args[0])
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
	case o.allow == triFalse || o.buf == bufDisabled:
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

// assignField applies the store a to the field sel, its target, if it is
// ReconnectBufSize or AllowReconnect.
func assignField(info *types.Info, o *optState, a *assignment, sel *ast.SelectorExpr) {
	if sel.Sel.Name != reconnectBufField && sel.Sel.Name != allowReconnectField {
		return
	}
	if a.rhs == nil || a.tok != token.ASSIGN {
		o.buf = bufUnknown
		return
	}
	assignOption(info, o, sel.Sel.Name, a.rhs)
}

// assignedBuf classifies a function literal used as a nats.Option, whose
// body's index is idx: the assignments in it to the ReconnectBufSize and
// AllowReconnect fields of any value, in source order.
func assignedBuf(info *types.Info, idx *assignIndex) (bufState, int64) {
	o := optState{allow: triTrue, buf: bufDefault}
	for i := range idx.all {
		a := &idx.all[i]
		if _, ok := a.node.(*ast.AssignStmt); !ok {
			continue
		}
		if sel, ok := ast.Unparen(a.lhs).(*ast.SelectorExpr); ok {
			assignField(info, &o, a, sel)
		}
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
	case *ast.UnaryExpr:
		if e.Op == token.AND {
			return optionsInit(info, e.X) // &nats.Options{...}
		}
	case *ast.CallExpr:
		if fn := calleeFunc(info, e); funcKey(fn) == defaultOptionsFunc {
			return optState{allow: triTrue, buf: bufDefault}
		}
	}
	return optState{}
}
