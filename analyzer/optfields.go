package analyzer

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
)

// The fields of option type: the stores to them the scan notes, and the
// judgement of a field by all of them (connOpts.fieldSum).

// noteStore notes the store a, as the scan records it, if it is to a
// field of option type (an assignment or &x; x++ and x-- are not noted):
// its value, or the field is bad.
func (co *connOpts) noteStore(a *assignment) {
	switch a.node.(type) {
	case *ast.AssignStmt:
		if f := optionField(co.info, a.lhs); f != nil {
			if a.rhs == nil || a.tok != token.ASSIGN {
				co.bad(f, "field "+f.Name()+" assigned from a call with several results")
				return
			}
			co.store(f, a.rhs, a.fb)
			return
		}
		// s.opts.ReconnectBufSize = -1: changed in place. Only the
		// buffer's settings matter (s.opts.Url = url does not).
		if sel, ok := ast.Unparen(a.lhs).(*ast.SelectorExpr); ok {
			if f := optionField(co.info, sel.X); f != nil && optionKind(f.Type()) == optOptions && bufferFields[sel.Sel.Name] {
				co.bad(f, "field "+f.Name()+"'s "+sel.Sel.Name+" is changed in place at "+co.where(a.node.Pos(), a.fb)+": look there")
			}
		}
		if ix, ok := ast.Unparen(a.lhs).(*ast.IndexExpr); ok {
			if f := optionField(co.info, ix.X); f != nil && optionKind(f.Type()) == optList {
				co.bad(f, "field "+f.Name()+" changed by index")
			}
		}
	case *ast.UnaryExpr:
		if f := optionField(co.info, a.lhs); f != nil {
			co.bad(f, "the address of field "+f.Name()+" is taken")
		}
	}
}

// bufferFields are the fields of nats.Options that decide the reconnect
// buffer.
var bufferFields = map[string]bool{"ReconnectBufSize": true, "AllowReconnect": true}

// where names a position for an audit entry: file:line, and the function
// it is in.
func (co *connOpts) where(pos token.Pos, fb *fnBody) string {
	p := co.pass.Fset.Position(pos)
	at := fmt.Sprintf("%s:%d", filepath.Base(p.Filename), p.Line)
	switch {
	case fb != nil && fb.self != nil:
		at += " in " + funcName(co.pass.Pkg, fb.self)
	case fb != nil && fb.lit != nil:
		at += " in " + co.vals.litName(co.pass.Pkg, co.pass.Fset, fb.lit)
	}
	return at
}

// litField notes the value a composite literal in the body fb stores in
// the field f, if it is of option type.
func (co *connOpts) litField(f *types.Var, val ast.Expr, fb *fnBody) {
	if optionKind(f.Type()) != optNone {
		co.store(f, val, fb)
		co.litStored[f] = true
	}
}

// store notes the value rhs stored in the field f of option type, in the
// body fb.
func (co *connOpts) store(f *types.Var, rhs ast.Expr, fb *fnBody) {
	if co.fieldStores == nil {
		co.fieldStores = make(map[*types.Var][]optStore)
		co.litStored = make(map[*types.Var]bool)
	}
	co.fieldStores[f] = append(co.fieldStores[f], optStore{rhs, fb})
}

// bad marks the field f of option type as not followed, for why.
func (co *connOpts) bad(f *types.Var, why string) {
	if co.fieldBad == nil {
		co.fieldBad = make(map[*types.Var]string)
	}
	co.fieldBad[f] = why
}

// optionField returns the field of option type that the selector e
// denotes, or nil.
func optionField(info *types.Info, e ast.Expr) *types.Var {
	if f := fieldOf(info, e); f != nil && optionKind(f.Type()) != optNone {
		return f
	}
	return nil
}

// fieldSum judges a field of option type by every store to it in the
// package. A field that other packages may set (exported, of an exported
// type) is not judged.
func (co *connOpts) fieldSum(f *types.Var) optSum {
	if s, ok := co.fields[f]; ok {
		return *s
	}
	defer co.mode(false)()
	if co.fields == nil {
		co.fields = make(map[*types.Var]*optSum)
	}
	co.fields[f] = &busy
	s := co.judgeField(f)
	co.fields[f] = &s
	return s
}

func (co *connOpts) judgeField(f *types.Var) optSum {
	if f.Pkg() != co.pass.Pkg {
		return unknownSum("field " + f.Name() + " of another package")
	}
	if why, bad := co.fieldBad[f]; bad {
		return unknownSum(why)
	}
	stores := co.fieldStores[f]
	if len(stores) == 0 {
		return unknownSum("field " + f.Name() + " never stored in this package")
	}
	var sum optSum
	for i, st := range stores {
		s := co.exprSum(st.fb, st.rhs)
		if s.Param >= 0 {
			return unknownSum("field " + f.Name() + " stored from a parameter at " + co.where(st.rhs.Pos(), st.fb) + ": look at its calls")
		}
		if s.Buf == bufUnknown {
			return s
		}
		if i > 0 && (s.Buf != sum.Buf || s.Size != sum.Size) {
			return unknownSum("field " + f.Name() + " stored with different options")
		}
		sum = s
	}
	return sum
}
