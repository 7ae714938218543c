package analyzer

import (
	"go/ast"
	"go/types"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// TestNamesExist loads the real shim, claimcheck and nats.go packages and
// checks that every name the analyzer matches by string (names.go,
// sendnames.go) still exists there, and that every exported function or
// method of shim and claimcheck that sends (calls a raw send API, directly
// or through the package's own functions) is in the shim send catalogue.
func TestNamesExist(t *testing.T) {
	if testing.Short() {
		t.Skip("loads packages with the go command")
	}
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo | packages.NeedImports | packages.NeedDeps}
	pkgs, err := packages.Load(cfg, shimPath, claimcheckPath, natsPath, jetstreamPath, microPath)
	if err != nil {
		t.Fatal(err)
	}
	byPath := make(map[string]*packages.Package)
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		byPath[p.PkgPath] = p
		for _, e := range p.Errors {
			t.Errorf("%s: %v", p.PkgPath, e)
		}
	})
	// All functions and methods by funcKey, and package-level objects by
	// "path.Name".
	funcs := make(map[string]*types.Func)
	objs := make(map[string]types.Object)
	for path, p := range byPath {
		if p.Types == nil || !isKnownShim(path) && !isNATSPackage(path) {
			continue
		}
		scope := p.Types.Scope()
		for _, name := range scope.Names() {
			obj := scope.Lookup(name)
			objs[path+"."+name] = obj
			if fn, ok := obj.(*types.Func); ok {
				funcs[funcKey(fn)] = fn
			}
			tn, ok := obj.(*types.TypeName)
			if !ok {
				continue
			}
			if n, ok := tn.Type().(*types.Named); ok {
				for i := 0; i < n.NumMethods(); i++ {
					funcs[funcKey(n.Method(i))] = n.Method(i)
				}
				if it, ok := n.Underlying().(*types.Interface); ok {
					for i := 0; i < it.NumMethods(); i++ {
						// Declared or embedded: keyed by the declaring interface.
						funcs[funcKey(it.Method(i))] = it.Method(i)
					}
				}
			}
		}
	}
	check := func(kind, key string, ok bool) {
		if !ok {
			t.Errorf("names.go or sendnames.go lists %s %s, which no longer exists", kind, key)
		}
	}
	for key := range rawSends {
		_, ok := funcs[key]
		check("raw send", key, ok)
	}
	for key := range shimSends {
		_, ok := funcs[key]
		check("shim send", key, ok)
	}
	for _, key := range []string{shimClassify, shimMayHaveRun, msgIDOptionFuncs[0], msgIDOptionFuncs[1], opIDOptionFunc,
		connectFunc, optionsConnect, reconnectBufOption, noReconnectOption, defaultOptionsFunc} {
		_, ok := funcs[key]
		check("function", key, ok)
	}
	for key := range opIDRequests {
		_, ok := funcs[key]
		check("function", key, ok)
	}
	for key := range receiveAPIs {
		_, ok := funcs[key]
		check("receive path", key, ok)
	}
	for key := range shimHandlers {
		_, ok := funcs[key]
		check("shim handler", key, ok)
	}
	if _, ok := funcs[shimConnOption]; !ok {
		check("function", shimConnOption, ok)
	}
	for key := range claimHeaders {
		_, ok := objs[key].(*types.Const)
		check("constant", key, ok)
	}
	if _, ok := objs[microHandlerFunc].(*types.TypeName); !ok {
		check("type", microHandlerFunc, ok)
	}
	for _, set := range []map[string]bool{headerSetters, receiveFuncs, flushFuncs, messageMethods, resolveFuncs, claimUseFuncs, syncSubscribes} {
		for key := range set {
			_, ok := funcs[key]
			check("function", key, ok)
		}
	}
	for key := range notDeliveredErrors {
		_, ok := objs[key].(*types.Var)
		check("error variable", key, ok)
	}
	for key, sends := range notWrittenErrors {
		_, ok := objs[key].(*types.Var)
		check("error variable", key, ok)
		for send := range sends {
			_, ok := rawSends[send]
			check("raw send", send, ok)
		}
	}
	for name := range shimOutcomes {
		_, ok := objs[shimPath+"."+name].(*types.Const)
		check("outcome constant", shimPath+"."+name, ok)
	}
	for _, tt := range slices.Concat(targetTypes, apiErrorTypes, sendingTypes) {
		_, ok := objs[tt[0]+"."+tt[1]].(*types.TypeName)
		check("type", tt[0]+"."+tt[1], ok)
	}
	// The fields read by name, and the shim functions and receiver types
	// of the suggested fixes.
	field := func(path, typ, name string) {
		tn, _ := objs[path+"."+typ].(*types.TypeName)
		ok := false
		if tn != nil {
			obj, _, _ := types.LookupFieldOrMethod(tn.Type(), true, tn.Pkg(), name)
			_, ok = obj.(*types.Var)
		}
		check("field", path+"."+typ+"."+name, ok)
	}
	for _, typ := range []string{optionsType, optionType} {
		_, ok := objs[natsPath+"."+typ].(*types.TypeName)
		check("type", natsPath+"."+typ, ok)
	}
	field(natsPath, optionsType, reconnectBufField)
	field(natsPath, optionsType, allowReconnectField)
	field(natsPath, msgType, headerField)
	field(natsPath, msgType, msgDataField)
	for _, at := range apiErrorTypes {
		field(at[0], at[1], apiErrorCodeField)
	}
	for _, ft := range fixTargets {
		_, ok := funcs[shimPath+"."+ft.fn]
		check("function", shimPath+"."+ft.fn, ok)
		_, ok = objs[natsPath+"."+ft.recvType].(*types.TypeName)
		check("type", natsPath+"."+ft.recvType, ok)
	}
	if c, ok := objs[natsPath+".MsgIdHdr"].(*types.Const); !ok || c.Val().ExactString() != `"`+msgIDHeader+`"` {
		t.Errorf("nats.MsgIdHdr is not %q", msgIDHeader)
	}

	// Every exported sender of shim and claimcheck is listed.
	for _, path := range []string{shimPath, claimcheckPath} {
		p := byPath[path]
		if p == nil {
			t.Fatalf("%s not loaded", path)
		}
		found := exportedSenders(p)
		t.Logf("%s: exported senders %v", path, found)
		if len(found) == 0 {
			t.Errorf("%s: no exported sender found: the test no longer sees sends", path)
		}
		for _, fn := range found {
			if _, ok := shimSends[funcKey(fn)]; !ok && !notSends[funcKey(fn)] {
				t.Errorf("%s sends but is not in sendnames.go's shimSends (or notSends in this test)", funcKey(fn))
			}
		}
	}
}

// notSends are exported functions of shim and claimcheck that reach a
// send API but are not sends for the retry check: a ReplyStream's reads
// and Close publish only the stream's control messages (acks, credit,
// the cancel), never the request again, so a read loop is no retry.
var notSends = map[string]bool{
	shimPath + ".ReplyStream.Read":    true,
	shimPath + ".ReplyStream.Close":   true,
	shimPath + ".ReplyStream.WriteTo": true,
}

// exportedSenders returns the exported functions and methods of p whose
// body, outside function literals, calls a raw send API, directly or
// through other functions of p.
func exportedSenders(p *packages.Package) []*types.Func {
	edges := make(map[*types.Func][]*types.Func)
	sends := make(map[*types.Func]bool)
	var decls []*types.Func
	for _, f := range p.Syntax {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			fn, _ := p.TypesInfo.Defs[fd.Name].(*types.Func)
			if fn == nil {
				continue
			}
			decls = append(decls, fn)
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncLit:
					return false
				case *ast.CallExpr:
					callee := calleeFunc(p.TypesInfo, n)
					if callee == nil {
						return true
					}
					if _, ok := rawSends[funcKey(callee)]; ok {
						sends[fn] = true
					} else if _, ok := shimSends[funcKey(callee)]; ok {
						sends[fn] = true
					} else if callee.Pkg() == p.Types {
						edges[fn] = append(edges[fn], callee)
					}
				}
				return true
			})
		}
	}
	for changed := true; changed; {
		changed = false
		for _, fn := range decls {
			if sends[fn] {
				continue
			}
			for _, c := range edges[fn] {
				if sends[c] {
					sends[fn], changed = true, true
					break
				}
			}
		}
	}
	var out []*types.Func
	for _, fn := range decls {
		if sends[fn] && fn.Exported() && !strings.HasSuffix(p.Fset.Position(fn.Pos()).Filename, "_test.go") {
			if sig := fn.Type().(*types.Signature); sig.Recv() != nil && recvTypeName(sig.Recv().Type()) != "" {
				if !ast.IsExported(recvTypeName(sig.Recv().Type())) {
					continue
				}
			}
			out = append(out, fn)
		}
	}
	return out
}

// TestRetryLibraries checks the retry-library table: every entry names
// helpers, and its predicate arguments and conflict-only helpers are
// among them; DefaultRetryHelpers lists each helper once.
func TestRetryLibraries(t *testing.T) {
	seen := make(map[string]bool)
	for _, h := range DefaultRetryHelpers() {
		if seen[h] {
			t.Errorf("DefaultRetryHelpers lists %s twice", h)
		}
		seen[h] = true
	}
	for _, lib := range retryLibraries {
		if len(lib.helpers) == 0 {
			t.Errorf("%s: no helpers", lib.pkg)
		}
		if lib.kind == helperOnMarked && len(lib.markers) == 0 {
			t.Errorf("%s: a library retrying marked errors needs its marker", lib.pkg)
		}
		for h := range lib.predicateArg {
			if !slices.Contains(lib.helpers, h) {
				t.Errorf("%s: predicate argument of %s, not a helper", lib.pkg, h)
			}
		}
		for _, h := range lib.onlyConflict {
			if !slices.Contains(lib.helpers, h) {
				t.Errorf("%s: conflict-only %s, not a helper", lib.pkg, h)
			}
		}
		if kind, markers := helperKindOf(lib.pkg + "." + lib.helpers[0]); kind != lib.kind || len(markers) != len(lib.markers) {
			t.Errorf("%s: helperKindOf = %v, %v", lib.pkg, kind, markers)
		}
	}
}
