package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/analysis"
)

// rawFix returns the mechanical rewrite of a raw Publish, PublishMsg or
// Respond call to its shim equivalent, adding the shim import if needed. It
// returns nil when the rewrite would not be exact: a spread argument, a
// receiver that is not a pointer, or an unexported embedded field on the way
// to it.
func (r *reporter) rawFix(call *ast.CallExpr, sel *ast.SelectorExpr, kind fixKind) []analysis.SuggestedFix {
	selection := r.pass.TypesInfo.Selections[sel]
	if selection == nil || selection.Kind() != types.MethodVal || call.Ellipsis.IsValid() || len(call.Args) == 0 {
		return nil
	}
	target, ok := fixTargets[kind]
	if !ok {
		return nil
	}
	fn, recvType, nargs, extra := target.fn, target.recvType, target.nargs, target.extra
	if len(call.Args) != nargs {
		return nil
	}
	recv, ok := r.receiverText(sel, selection, recvType)
	if !ok {
		return nil
	}
	file := r.files[r.pass.Fset.File(call.Pos())]
	if file == nil {
		return nil
	}
	name, importEdits, ok := shimName(r.pass.TypesInfo, r.pass.Pkg, file, call.Pos())
	if !ok {
		return nil
	}
	edits := []analysis.TextEdit{{
		Pos:     call.Fun.Pos(),
		End:     call.Lparen + 1,
		NewText: []byte(name + "." + fn + "(" + recv + ", "),
	}}
	if extra != "" {
		last := call.Args[len(call.Args)-1]
		edits = append(edits, analysis.TextEdit{Pos: last.End(), End: last.End(), NewText: []byte(extra)})
	}
	edits = append(edits, importEdits...)
	return []analysis.SuggestedFix{{
		Message:   "Use " + name + "." + fn,
		TextEdits: edits,
	}}
}

// receiverText returns the source of the expression that yields the
// *nats.<typeName> receiver of a method selection, following embedded
// fields (s.Publish with s embedding *nats.Conn gives "s.Conn").
func (r *reporter) receiverText(sel *ast.SelectorExpr, selection *types.Selection, typeName string) (string, bool) {
	text := r.source(sel.X)
	if text == "" {
		return "", false
	}
	t := r.pass.TypesInfo.TypeOf(sel.X)
	index := selection.Index()
	for _, i := range index[:len(index)-1] {
		u := t
		if p, ok := types.Unalias(u).(*types.Pointer); ok {
			u = p.Elem()
		}
		s, ok := u.Underlying().(*types.Struct)
		if !ok || i >= s.NumFields() {
			return "", false
		}
		f := s.Field(i)
		if !f.Exported() && f.Pkg() != r.pass.Pkg {
			return "", false
		}
		text += "." + f.Name()
		t = f.Type()
	}
	p, ok := types.Unalias(t).(*types.Pointer)
	if !ok || !isNamed(p.Elem(), natsPath, typeName) {
		return "", false
	}
	return text, true
}

// shimName returns the name by which the shim package can be referred to at
// pos in file, and the edits that add its import when the file lacks one.
// It reuses an existing import (under its name, if renamed) and picks an
// alias when "shim" already means something else at pos.
func shimName(info *types.Info, pkg *types.Package, file *ast.File, pos token.Pos) (string, []analysis.TextEdit, bool) {
	return importName(info, pkg, file, pos, shimPath, []string{"shim", "natsshim", "natssendshim"})
}

// importEdit returns an edit adding the import spec to file.
func importEdit(file *ast.File, spec string) analysis.TextEdit {
	var last *ast.GenDecl
	for _, d := range file.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			last = g
		}
	}
	switch {
	case last == nil:
		return analysis.TextEdit{Pos: file.Name.End(), End: file.Name.End(), NewText: []byte("\n\nimport " + spec)}
	case last.Lparen.IsValid() && len(last.Specs) > 0:
		end := last.Specs[len(last.Specs)-1].End()
		return analysis.TextEdit{Pos: end, End: end, NewText: []byte("\n\t" + spec)}
	case last.Lparen.IsValid():
		return analysis.TextEdit{Pos: last.Lparen + 1, End: last.Lparen + 1, NewText: []byte("\n\t" + spec + "\n")}
	default:
		return analysis.TextEdit{Pos: last.End(), End: last.End(), NewText: []byte("\nimport " + spec)}
	}
}
