package analyzer

import (
	"go/ast"
	"go/types"
)

// noReturnFact marks a function that never returns: its body ends with a
// call that does not return and has no return statement (func fatalf(...)
// { log.Printf(...); os.Exit(1) }). Such a call ends a path, like
// log.Fatal, in this package and in those that import it.
type noReturnFact struct{}

// AFact marks noReturnFact as an analysis.Fact.
func (*noReturnFact) AFact() {}

func (*noReturnFact) String() string { return "does not return" }

// inferNoReturn finds the package's functions that do not return and
// exports their facts. It looks at each top-level function's last
// statement first, so that most functions cost nothing.
func (st *state) inferNoReturn() {
	var cands []*ast.FuncDecl
	for _, f := range st.pass.Files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || len(fd.Body.List) == 0 || (fd.Recv == nil && fd.Name.Name == "main") {
				continue // nobody calls main
			}
			if es, ok := fd.Body.List[len(fd.Body.List)-1].(*ast.ExprStmt); ok {
				if _, ok := ast.Unparen(es.X).(*ast.CallExpr); ok && !hasReturn(fd.Body) {
					cands = append(cands, fd)
				}
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, fd := range cands {
			fn, _ := st.info.Defs[fd.Name].(*types.Func)
			if fn == nil || st.noReturn[fn] {
				continue
			}
			last := fd.Body.List[len(fd.Body.List)-1].(*ast.ExprStmt).X.(*ast.CallExpr)
			if !st.mayReturn(last) {
				st.noReturn[fn] = true
				changed = true
			}
		}
	}
	for fn := range st.noReturn {
		st.pass.ExportObjectFact(fn, new(noReturnFact))
	}
}

// hasReturn reports whether body has a return statement outside function
// literals.
func hasReturn(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			found = true
		}
		return !found
	})
	return found
}
