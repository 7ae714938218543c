package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"
	"strconv"

	"golang.org/x/tools/go/analysis"
)

// fix returns the rewrite of a raw subscription or Consume to the
// claimcheck Store's helper: nc.Subscribe(subj, h) becomes
// st.Subscribe(subj, h, onErr), cons.Consume(h) becomes st.Consume(cons,
// h, onErr), with an error handler that logs. It is offered only when
// exactly one *claimcheck.Store is in scope (a variable, or a field of the
// method's receiver), the handler is a function (not a named handler
// type, which claimcheck's handler type does not accept), and no options
// are passed (claimcheck takes its own).
func (c *recvCheck) fix(s recvSite) []analysis.SuggestedFix {
	call := s.call
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok || call.Ellipsis.IsValid() || len(call.Args) != s.api.arg+1 {
		return nil
	}
	if _, unnamed := types.Unalias(c.info.TypeOf(call.Args[s.api.arg])).(*types.Signature); !unnamed {
		return nil
	}
	file := c.rep.files[c.pass.Fset.File(call.Pos())]
	if file == nil {
		return nil
	}
	store := c.storeAt(file, call.Pos(), s.outer)
	if store == "" {
		return nil
	}
	logName, logEdits, ok := importName(c.info, c.pass.Pkg, file, call.Pos(), "log", []string{"log", "stdlog"})
	if !ok {
		return nil
	}
	var onErr string
	edits := []analysis.TextEdit{}
	if s.api.fix == "Consume" {
		js, _, ok := importName(c.info, c.pass.Pkg, file, call.Pos(), jetstreamPath, nil)
		recv := c.rep.source(sel.X)
		if !ok || recv == "" {
			return nil
		}
		onErr = "func(msg " + js + ".Msg, err error) { " + logName + `.Printf("claim check on %s: %v", msg.Subject(), err) }`
		edits = append(edits, analysis.TextEdit{Pos: call.Fun.Pos(), End: call.Lparen + 1, NewText: []byte(store + "." + s.api.fix + "(" + recv + ", ")})
	} else {
		nats, _, ok := importName(c.info, c.pass.Pkg, file, call.Pos(), natsPath, nil)
		if !ok {
			return nil
		}
		onErr = "func(m *" + nats + ".Msg, err error) { " + logName + `.Printf("claim check on %s: %v", m.Subject, err) }`
		edits = append(edits, analysis.TextEdit{Pos: sel.X.Pos(), End: sel.Sel.End(), NewText: []byte(store + "." + s.api.fix)})
	}
	last := call.Args[len(call.Args)-1]
	edits = append(edits, analysis.TextEdit{Pos: last.End(), End: last.End(), NewText: []byte(", " + onErr)})
	edits = append(edits, logEdits...)
	return []analysis.SuggestedFix{{
		Message:   "Use " + store + "." + s.api.fix + ", which resolves claim checks",
		TextEdits: edits,
	}}
}

// storeAt returns the one expression naming a *claimcheck.Store at pos:
// a variable in scope, or a field of the enclosing method's receiver; ""
// when there is none or more than one.
func (c *recvCheck) storeAt(file *ast.File, pos token.Pos, outer *ast.FuncDecl) string {
	var found []string
	isStore := func(t types.Type) bool {
		p, ok := types.Unalias(t).(*types.Pointer)
		return ok && isNamed(p.Elem(), claimcheckPath, "Store")
	}
	inner := c.pass.Pkg.Scope().Innermost(pos)
	if inner == nil {
		return ""
	}
	for sc := inner; sc != nil && sc != types.Universe; sc = sc.Parent() {
		for _, name := range sc.Names() {
			v, ok := sc.Lookup(name).(*types.Var)
			if !ok || !isStore(v.Type()) || (sc != c.pass.Pkg.Scope() && v.Pos() > pos) {
				continue
			}
			if _, obj := inner.LookupParent(name, pos); obj == v {
				found = append(found, name)
			}
		}
	}
	if outer != nil && outer.Recv != nil && len(outer.Recv.List) == 1 && len(outer.Recv.List[0].Names) == 1 {
		name := outer.Recv.List[0].Names[0]
		if v, ok := c.info.Defs[name].(*types.Var); ok {
			t := v.Type()
			if p, ok := types.Unalias(t).(*types.Pointer); ok {
				t = p.Elem()
			}
			if st, ok := t.Underlying().(*types.Struct); ok {
				for i := range st.NumFields() {
					if f := st.Field(i); isStore(f.Type()) {
						found = append(found, name.Name+"."+f.Name())
					}
				}
			}
		}
	}
	if len(found) != 1 {
		return ""
	}
	return found[0]
}

// importName returns the name by which the package path can be referred
// to at pos in file, and the edits that add its import when the file
// lacks one: an existing import (under its name, if renamed), or the
// first of candidates not taken at pos. With no candidates, the package
// must already be imported.
func importName(info *types.Info, pkg *types.Package, file *ast.File, pos token.Pos, path string, candidates []string) (string, []analysis.TextEdit, bool) {
	scope := pkg.Scope().Innermost(pos)
	if scope == nil {
		return "", nil, false
	}
	lookup := func(name string) types.Object {
		_, obj := scope.LookupParent(name, pos)
		return obj
	}
	taken := make(map[string]bool)
	for _, imp := range file.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		name := ""
		if pn := info.PkgNameOf(imp); pn != nil {
			name = pn.Name()
		}
		taken[name] = true
		if p != path || name == "_" || name == "." || name == "" {
			continue
		}
		if pn, ok := lookup(name).(*types.PkgName); ok && pn.Imported().Path() == path {
			return name, nil, true
		}
	}
	for i, name := range candidates {
		if taken[name] || lookup(name) != nil {
			continue
		}
		spec := strconv.Quote(path)
		if i > 0 {
			spec = name + " " + spec
		}
		return name, []analysis.TextEdit{importEdit(file, spec)}, true
	}
	return "", nil, false
}
