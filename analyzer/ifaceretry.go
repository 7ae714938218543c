package analyzer

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/build"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"
)

// Retries through an interface implemented elsewhere. A loop that calls
// an interface method until it succeeds (outbox.Relay retrying
// events.Publisher.Publish) cannot know what it retries when the sending
// implementation (natspub.JetStream) is converted into the interface only
// in a package that imports it (the command wiring both, or a plugin
// registering itself with the loop's package). Facts flow only to
// importers, so the loop's package lists such retries in an
// ifaceRetryFact, and a package importing it directly that converts an
// implementation whose method sends into that interface reports the
// conversion: that is where the retried send is chosen, as a raw send's
// flow is reported where it is chosen (flows.go).

// ifaceRetryFact lists the calls of interface methods that a package
// retries on failure without seeing an implementation that sends.
type ifaceRetryFact struct {
	Sites []ifaceRetrySite
}

// ifaceRetrySite is one retried call of an interface method.
type ifaceRetrySite struct {
	Iface  string // the interface: import path, ".", type name
	Method string // the method called
	Func   string // the function retrying it ((*outbox.Relay).Run)
	At     string // file name and line of the call
}

// AFact marks ifaceRetryFact as an analysis.Fact.
func (*ifaceRetryFact) AFact() {}

func (f *ifaceRetryFact) String() string {
	var b strings.Builder
	b.WriteString("retries through")
	for _, s := range f.Sites {
		b.WriteString(" " + s.Iface[strings.LastIndex(s.Iface, "/")+1:] + "." + s.Method)
	}
	return b.String()
}

// ifaceConv is a concrete type converted into an interface of the
// user's own, at an expression of this package.
type ifaceConv struct {
	at    ast.Expr
	src   types.Type
	iface *types.TypeName
}

// ifaceKey is the key of an interface type name in ifaceRetrySite.
func ifaceKey(tn *types.TypeName) string { return tn.Pkg().Path() + "." + tn.Name() }

// retriedIface returns the interface type through which call calls fn
// when the call may reach an implementation that sends that this package
// cannot see: fn is a method of a named interface of the main module (not
// nats.go's, not the standard library's) whose last result is an error.
func retriedIface(info *types.Info, call *ast.CallExpr, fn *types.Func, user func(*types.Package) bool) *types.TypeName {
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil || !types.IsInterface(sig.Recv().Type()) || sig.Results().Len() == 0 {
		return nil
	}
	if !isError(sig.Results().At(sig.Results().Len() - 1).Type()) {
		return nil
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	named, ok := types.Unalias(info.TypeOf(sel.X)).(*types.Named)
	if !ok || !types.IsInterface(named) {
		return nil
	}
	obj := named.Origin().Obj()
	if obj.Pkg() == nil || isNATSPackage(obj.Pkg().Path()) || !user(obj.Pkg()) {
		return nil
	}
	return obj
}

func isError(t types.Type) bool {
	return types.Identical(t, types.Universe.Lookup("error").Type())
}

// userPackages reports whether a package is the user's: in the analyzed
// package's module, or, without module information (GOPATH, tests), not
// in the Go root.
func (st *state) userPackage(p *types.Package) bool {
	if p == st.pass.Pkg {
		return true
	}
	if m := st.pass.Module; m != nil && m.Path != "" {
		return p.Path() == m.Path || strings.HasPrefix(p.Path(), m.Path+"/")
	}
	if st.std == nil {
		st.std = make(map[*types.Package]bool)
	}
	std, ok := st.std[p]
	if !ok {
		bp, err := build.Default.Import(p.Path(), "", build.FindOnly)
		std = err == nil && bp.Goroot
		st.std[p] = std
	}
	return !std
}

// hasIfaceLoops reports whether a function of the package calls a
// method of an interface of the user's own in a loop: a package that does
// not use nats.go is scanned only then, for its ifaceRetryFact.
func (st *state) hasIfaceLoops() bool {
	for _, f := range st.pass.Files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			loops, calls := false, false
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.ForStmt, *ast.RangeStmt:
					loops = true
				case *ast.BranchStmt:
					loops = loops || n.Tok == token.GOTO
				case *ast.CallExpr:
					if fn := calleeFunc(st.info, n); !calls && fn != nil {
						calls = retriedIface(st.info, n, fn, st.userPackage) != nil
					}
				}
				return !loops || !calls
			})
			if loops && calls {
				return true
			}
		}
	}
	return false
}

// ifaceSite returns call as a send site when it calls an interface
// method through a receiver whose values this package does not know
// (retriedIface), for the retry check to judge.
func (rt *retryCheck) ifaceSite(call *ast.CallExpr) (sendSite, *types.TypeName, bool) {
	fn := calleeFunc(rt.info, call)
	if fn == nil {
		return sendSite{}, nil, false
	}
	if _, sends := rt.sends.sendOf(call); sends {
		return sendSite{}, nil, false // judged as a send
	}
	tn := retriedIface(rt.info, call, fn, rt.user)
	if tn == nil {
		return sendSite{}, nil, false
	}
	if vals, ok := rt.vals.valuesOf(ast.Unparen(call.Fun).(*ast.SelectorExpr).X); ok && !slices.ContainsFunc(vals, func(v ast.Expr) bool {
		t := rt.info.TypeOf(v)
		return t == nil || types.IsInterface(t)
	}) {
		return sendSite{}, nil, false // concreteSend judged its values: no send
	}
	return sendSite{call: call, info: sendInfo{via: funcName(rt.pass.Pkg, fn)}, name: funcName(rt.pass.Pkg, fn)}, tn, true
}

// checkIfaceRetries adds to rt.ifaceSites the calls of interface methods
// in fb (looping) that a failure path reaches again, unless a retry
// directive covers them.
func (rt *retryCheck) checkIfaceRetries(fb *fnBody) {
	var sites []sendSite
	var ifaces []*types.TypeName
	for _, call := range fb.calls {
		if s, tn, ok := rt.ifaceSite(call); ok {
			sites, ifaces = append(sites, s), append(ifaces, tn)
		}
	}
	if len(sites) == 0 {
		return
	}
	bc := rt.bodyCFG(fb)
	locs := locate(rt.info, bc.g, fb.body, sites)
	for j, s := range sites {
		if _, ok := rt.retriedAt(fb, bc, locs[j], s); !ok || rt.rep.reviewedRetry(s.call) {
			continue
		}
		var name string
		if fb.self != nil {
			name = funcName(nil, fb.self)
		} else {
			name = rt.vals.litName(nil, rt.pass.Fset, fb.lit)
		}
		pos := rt.pass.Fset.Position(s.call.Pos())
		fn := calleeFunc(rt.info, s.call)
		rt.ifaceSites = append(rt.ifaceSites, ifaceRetrySite{
			Iface: ifaceKey(ifaces[j]), Method: fn.Name(), Func: name,
			At: fmt.Sprintf("%s:%d", filepath.Base(pos.Filename), pos.Line),
		})
	}
}

// exportIfaceRetries exports the package's ifaceRetryFact.
func (rt *retryCheck) exportIfaceRetries() {
	if len(rt.ifaceSites) > 0 {
		rt.pass.ExportPackageFact(&ifaceRetryFact{Sites: rt.ifaceSites})
	}
}

// reportIfaceRetries reports each conversion of a concrete type into an
// interface whose method is retried (in this package or, by a fact, in a
// package it imports directly) when the type's method of that name sends.
func (st *state) reportIfaceRetries() {
	convs := st.sends.impls.convs
	if len(convs) == 0 {
		return
	}
	sites := make(map[string][]ifaceRetrySite)
	for _, s := range st.retry.ifaceSites {
		sites[s.Iface] = append(sites[s.Iface], s)
	}
	// Package facts come from direct imports only: go vet does not pass
	// an imported package's package facts on, and both drivers must
	// report the same.
	for _, imp := range st.pass.Pkg.Imports() {
		var f ifaceRetryFact
		if st.pass.ImportPackageFact(imp, &f) {
			for _, s := range f.Sites {
				sites[s.Iface] = append(sites[s.Iface], s)
			}
		}
	}
	if len(sites) == 0 {
		return
	}
	for _, ss := range sites {
		slices.SortFunc(ss, func(a, b ifaceRetrySite) int {
			return cmp.Or(strings.Compare(a.Func, b.Func), strings.Compare(a.At, b.At))
		})
	}
	for _, c := range convs {
		iface, _ := c.iface.Type().Underlying().(*types.Interface)
		for _, s := range sites[ifaceKey(c.iface)] {
			m := interfaceMethod(iface, s.Method)
			if m == nil {
				continue
			}
			si, ok := st.sends.methodsSend([]types.Type{c.src}, m)
			if !ok {
				continue
			}
			st.rep.add(&finding{
				category: CategoryRetry, pos: c.at.Pos(), end: c.at.End(), api: si.via, report: true,
				message: fmt.Sprintf("%s flows into %s; %s retries its %s on failure at %s: %s",
					typeName(st.pass.Pkg, c.src), typeName(st.pass.Pkg, c.iface.Type()), s.Func, s.Method, s.At, retryAdvice(si.kind)),
			})
			break
		}
	}
}

// interfaceMethod returns the method of iface named name, or nil.
func interfaceMethod(iface *types.Interface, name string) *types.Func {
	if iface == nil {
		return nil
	}
	for i := range iface.NumMethods() {
		if m := iface.Method(i); m.Name() == name {
			return m
		}
	}
	return nil
}
