package analyzer

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
)

// Flags are local bool variables set to constants (sent = true): a loop
// condition over them (for !sent && tries < 3) is decided on a path that
// set them, so a success that sets the flag ends the loop.

// maxFlags bounds the flags tracked in one function body.
const maxFlags = 64

// boolConst returns the value of a constant bool expression.
func boolConst(info *types.Info, e ast.Expr) (bool, bool) {
	tv := info.Types[e]
	if tv.Value == nil || tv.Value.Kind() != constant.Bool {
		return false, false
	}
	return constant.BoolVal(tv.Value), true
}

// setFlags returns the known flags and their values after node runs.
func setFlags(info *types.Info, node ast.Node, flags map[*types.Var]int, known, vals uint64) (uint64, uint64) {
	if len(flags) == 0 {
		return known, vals
	}
	set := func(l, r ast.Expr, tok token.Token) {
		v := localVar(info, l)
		i, ok := flags[v]
		if !ok {
			return
		}
		bit := uint64(1) << i
		if b, ok := boolConst(info, r); ok && r != nil && (tok == token.ASSIGN || tok == token.DEFINE) {
			known |= bit
			if b {
				vals |= bit
			} else {
				vals &^= bit
			}
			return
		}
		known &^= bit
	}
	ast.Inspect(node, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				var r ast.Expr
				if len(n.Rhs) == len(n.Lhs) {
					r = n.Rhs[i]
				}
				set(l, r, n.Tok)
			}
		case *ast.ValueSpec:
			for i, name := range n.Names {
				if i < len(n.Values) {
					set(name, n.Values[i], token.DEFINE)
				} else if i, ok := flags[localVar(info, name)]; ok && len(n.Values) == 0 {
					known |= 1 << i // var sent bool: false
					vals &^= 1 << i
				}
			}
		}
		return true
	})
	return known, vals
}

// evalFlags evaluates the condition e from the known flags: ok is false
// when they do not decide it.
func evalFlags(info *types.Info, e ast.Expr, flags map[*types.Var]int, known, vals uint64) (val, ok bool) {
	if len(flags) == 0 || known == 0 {
		return false, false
	}
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		v, _ := info.Uses[x].(*types.Var)
		if i, isFlag := flags[v]; isFlag && known&(1<<i) != 0 {
			return vals&(1<<i) != 0, true
		}
	case *ast.UnaryExpr:
		if x.Op == token.NOT {
			v, ok := evalFlags(info, x.X, flags, known, vals)
			return !v, ok
		}
	case *ast.BinaryExpr:
		l, lok := evalFlags(info, x.X, flags, known, vals)
		r, rok := evalFlags(info, x.Y, flags, known, vals)
		switch x.Op {
		case token.LAND:
			if (lok && !l) || (rok && !r) {
				return false, true
			}
			return true, lok && rok
		case token.LOR:
			if (lok && l) || (rok && r) {
				return true, true
			}
			return false, lok && rok
		}
	}
	return false, false
}
