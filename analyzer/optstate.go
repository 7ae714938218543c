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
