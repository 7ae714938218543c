package analyzer

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// retryHelperFact marks a function that retries some of its function
// parameters: a path on which a call of the parameter failed calls it
// again. A send inside a function literal passed there is retried, in
// this package and in those that import it.
type retryHelperFact struct {
	Params []int // the indexes of the retried parameters, ascending
}

// AFact marks retryHelperFact as an analysis.Fact.
func (*retryHelperFact) AFact() {}

func (f *retryHelperFact) String() string {
	if len(f.Params) == 1 {
		return fmt.Sprintf("retries parameter %d", f.Params[0])
	}
	return fmt.Sprintf("retries parameters %v", f.Params)
}

// helperParams maps the retry helpers of the package to the parameters
// they retry (ascending).
type helperParams map[*types.Func][]int

// add records that fn retries parameter i, and reports whether that is
// new.
func (hp helperParams) add(fn *types.Func, i int) bool {
	ps := hp[fn]
	j, found := slices.BinarySearch(ps, i)
	if found {
		return false
	}
	hp[fn] = slices.Insert(ps, j, i)
	return true
}

// funcParam returns the index of the parameter v of fn's signature whose
// type is a function returning an error last, or -1.
func funcParam(sig *types.Signature, v *types.Var) int {
	for i := 0; i < sig.Params().Len(); i++ {
		p := sig.Params().At(i)
		if p != v {
			continue
		}
		fs, ok := p.Type().Underlying().(*types.Signature)
		if !ok || fs.Results().Len() == 0 || !isErrorType(fs.Results().At(fs.Results().Len()-1).Type()) {
			return -1
		}
		return i
	}
	return -1
}

// inferHelpers finds the functions of this package that retry a function
// parameter, with the same path search as for sends, and exports their
// facts. Then the calls that pass a function literal to one of them are
// checked as retry helper calls. The parameters found only grow until
// nothing changes, so the facts do not depend on the order the bodies are
// visited in.
func (rt *retryCheck) inferHelpers() {
	helpers := make(helperParams)
	for _, fb := range rt.vals.list {
		if fb.self == nil {
			continue
		}
		sig := fb.self.Type().(*types.Signature)
		var sites []sendSite
		var params []int
		for _, call := range fb.calls {
			id, ok := ast.Unparen(call.Fun).(*ast.Ident)
			if !ok {
				continue
			}
			v, _ := rt.info.Uses[id].(*types.Var)
			if v == nil {
				continue
			}
			if i := funcParam(sig, v); i >= 0 {
				sites = append(sites, sendSite{call: call, info: sendInfo{via: id.Name, param: true}, name: id.Name})
				params = append(params, i)
			}
		}
		if len(sites) == 0 || !fb.loops && !rt.graph.mayRecurse(fb) {
			continue
		}
		bc := rt.bodyCFG(fb)
		locs := locate(rt.info, bc.g, fb.body, sites)
		for j, s := range sites {
			if slices.Contains(helpers[fb.self], params[j]) {
				continue
			}
			if _, ok := rt.retriedAt(fb, bc, locs[j], s); ok {
				helpers.add(fb.self, params[j])
			}
		}
	}
	// A function passing its function parameter on to a retry helper, at
	// a position the helper retries, is one too (checkFor(t, d, f) calling
	// checkForErr(d, f)).
	for changed := true; changed; {
		changed = false
		for _, fb := range rt.vals.list {
			if fb.self == nil {
				continue
			}
			for _, i := range passedToHelpers(rt.pass, fb, helpers) {
				changed = helpers.add(fb.self, i) || changed
			}
		}
	}
	if !isKnownShim(rt.pass.Pkg.Path()) {
		for fn, ps := range helpers {
			rt.pass.ExportObjectFact(fn, &retryHelperFact{Params: ps})
		}
	}
	for _, lc := range rt.helperCandidates {
		if ps, ok := helpers[lc.callee]; ok && !rt.set.helpers[funcKey(lc.callee)] {
			rt.helperCalls = append(rt.helperCalls, helperCall{call: lc.call, key: funcKey(lc.callee), name: helperName(lc.callee), inferred: true, params: ps})
		}
	}
}

// importedHelper returns the retried parameters of a function of another
// package with a retryHelperFact.
func importedHelper(pass *analysis.Pass, fn *types.Func) ([]int, bool) {
	if fn.Pkg() == nil || fn.Pkg() == pass.Pkg {
		return nil, false
	}
	var f retryHelperFact
	if !pass.ImportObjectFact(fn.Origin(), &f) {
		return nil, false
	}
	return f.Params, true
}

// scanHelperCandidates builds the bodies of the top-level functions that
// take a function parameter returning an error, and records their stores
// for their assignment indexes, for inferHelpers, without walking the rest
// of the package.
func (rt *retryCheck) scanHelperCandidates() {
	for _, f := range rt.pass.Files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			fn, _ := rt.info.Defs[fd.Name].(*types.Func)
			if fn == nil || !hasFuncParam(fn.Type().(*types.Signature)) {
				continue
			}
			fb := rt.vals.addDecl(fd, fn)
			rt.vals.stores.recordBody(rt.info, fb)
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncLit:
					return false
				case *ast.ForStmt, *ast.RangeStmt:
					fb.loops = true
				case *ast.BranchStmt:
					fb.loops = fb.loops || n.Tok == token.GOTO
				case *ast.CallExpr:
					fb.calls = append(fb.calls, n)
				}
				return true
			})
		}
	}
}

// hasFuncParam reports whether sig has a parameter of a function type
// returning an error last.
func hasFuncParam(sig *types.Signature) bool {
	for i := 0; i < sig.Params().Len(); i++ {
		if funcParam(sig, sig.Params().At(i)) >= 0 {
			return true
		}
	}
	return false
}

// inferHere reports whether the analyzer infers the facts that other
// packages' findings depend on (functions that do not return, retry
// helpers) in the package being analyzed, outside nats.go and the standard
// library: in a package that imports nats.go, directly or not, or one of
// the main module (a module without a version: the one being linted, or a
// workspace's). Not in other modules' packages without NATS, which go vet
// analyzes but cmd/natssend-lint reads from export data: the two drivers
// then see the same facts. Nor in a main-module package without NATS
// whose every file is generated code ("// Code generated ... DO NOT
// EDIT.": sqlc queries, an OpenAPI server): tools do not write retry
// helpers, and analysing such packages cost most of a lint of a module
// full of them. cmd/natssend-lint's loader follows the same rule
// (load.go: it reads such a package from export data unless it is
// named); change them together.
func inferHere(pass *analysis.Pass, nats bool) bool {
	if nats {
		return true
	}
	return (pass.Module == nil || pass.Module.Version == "") && !allGenerated(pass.Files)
}

// allGenerated reports whether files is not empty and every file in it
// is generated code (ast.IsGenerated).
func allGenerated(files []*ast.File) bool {
	for _, f := range files {
		if !ast.IsGenerated(f) {
			return false
		}
	}
	return len(files) > 0
}

// inGOROOT reports whether the package's files are in the Go root (the
// standard library).
func inGOROOT(pass *analysis.Pass) bool {
	root := build.Default.GOROOT
	if root == "" || len(pass.Files) == 0 {
		return false
	}
	tf := pass.Fset.File(pass.Files[0].FileStart)
	return tf != nil && strings.HasPrefix(filepath.ToSlash(tf.Name()), filepath.ToSlash(root)+"/")
}

// passedToHelpers returns the function parameters of fb that it passes
// on to a retry helper at a position the helper retries, ascending.
func passedToHelpers(pass *analysis.Pass, fb *fnBody, helpers helperParams) []int {
	sig := fb.self.Type().(*types.Signature)
	var out []int
	for _, call := range fb.calls {
		callee := calleeFunc(pass.TypesInfo, call)
		if callee == nil {
			continue
		}
		ks, ok := helpers[callee]
		if !ok {
			if ks, ok = importedHelper(pass, callee); !ok {
				continue
			}
		}
		for _, k := range ks {
			if k >= len(call.Args) {
				continue
			}
			id, ok := ast.Unparen(call.Args[k]).(*ast.Ident)
			if !ok {
				continue
			}
			if v, ok := pass.TypesInfo.Uses[id].(*types.Var); ok {
				if i := funcParam(sig, v); i >= 0 {
					if j, found := slices.BinarySearch(out, i); !found {
						out = slices.Insert(out, j, i)
					}
				}
			}
		}
	}
	return out
}
