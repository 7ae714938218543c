package analyzer

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
)

// noReturnFact marks a function that never returns: its body ends with a
// call that does not return and has no return statement (func fatalf(...)
// { log.Printf(...); os.Exit(1) }). Such a call ends a path, like
// log.Fatal, in this package and in those that import it.
type noReturnFact struct{}

// AFact marks noReturnFact as an analysis.Fact.
func (*noReturnFact) AFact() {}

func (*noReturnFact) String() string { return "does not return" }

// noReturns knows which calls do not return, for the control-flow
// graphs of every check: the standard ones (panic, os.Exit, log.Fatal,
// t.Fatal...), the functions of this package found not to return
// (infer), and those of other packages with a noReturnFact.
type noReturns struct {
	pass  *analysis.Pass
	info  *types.Info
	funcs map[*types.Func]bool // functions of this package that do not return
}

// newNoReturns returns the no-return functions of pass, none inferred yet.
func newNoReturns(pass *analysis.Pass) *noReturns {
	return &noReturns{pass: pass, info: pass.TypesInfo, funcs: make(map[*types.Func]bool)}
}

// infer finds the package's functions that do not return and
// exports their facts. It looks at each top-level function's last
// statement first, so that most functions cost nothing.
func (nr *noReturns) infer() {
	var cands []*ast.FuncDecl
	for _, f := range nr.pass.Files {
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
			fn, _ := nr.info.Defs[fd.Name].(*types.Func)
			if fn == nil || nr.funcs[fn] {
				continue
			}
			last := fd.Body.List[len(fd.Body.List)-1].(*ast.ExprStmt).X.(*ast.CallExpr)
			if !nr.mayReturn(last) {
				nr.funcs[fn] = true
				changed = true
			}
		}
	}
	for fn := range nr.funcs {
		nr.pass.ExportObjectFact(fn, new(noReturnFact))
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

// mayReturn reports whether a call may return, for the control-flow graph:
// panic, os.Exit, runtime.Goexit, log.Fatal* and log.Panic* (also of a
// *log.Logger), and the Fatal, FailNow and Skip methods of testing.T, B, F
// and TB do not.
func (nr *noReturns) mayReturn(call *ast.CallExpr) bool {
	if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok {
		if b, ok := nr.info.Uses[id].(*types.Builtin); ok && b.Name() == "panic" {
			return false
		}
	}
	fn := calleeFunc(nr.info, call)
	if fn == nil {
		return true
	}
	if noReturnFuncs[funcKey(fn)] || nr.funcs[fn] {
		return false
	}
	if fn.Pkg() != nil && fn.Pkg() != nr.pass.Pkg && !isNATSPackage(fn.Pkg().Path()) {
		return !nr.pass.ImportObjectFact(fn, new(noReturnFact))
	}
	return true
}
