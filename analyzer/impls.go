package analyzer

import (
	"go/ast"
	"go/types"
)

// implIndex records the concrete types converted into each interface type
// of the user's own in the package (assigned, passed, returned, stored or
// sent as the interface: the conversion sites the flow check visits), so
// that a call through the interface is a send when every implementation
// converted into it sends (implSend): a framework's transport interface
// whose only implementation in the package wraps a *nats.Conn.
type implIndex struct {
	byIface map[*types.TypeName][]types.Type
	// convs lists the conversions into interfaces of the user's own
	// (user), for reportIfaceRetries.
	convs []ifaceConv
	user  func(*types.Package) bool
}

// record notes a value of type src converted into dst, when dst is a
// named interface declared outside nats.go and src a concrete type.
func (ix *implIndex) record(at ast.Expr, src, dst types.Type) {
	named, ok := types.Unalias(dst).(*types.Named)
	if !ok || named.Obj().Pkg() == nil || isNATSPackage(named.Obj().Pkg().Path()) {
		return
	}
	iface, ok := named.Underlying().(*types.Interface)
	if !ok || iface.NumMethods() == 0 || types.IsInterface(src) {
		return
	}
	if _, isTuple := src.(*types.Tuple); isTuple {
		return
	}
	obj := named.Origin().Obj()
	if ix.user != nil && ix.user(obj.Pkg()) && len(ix.convs) < maxConvs {
		ix.convs = append(ix.convs, ifaceConv{at: at, src: src, iface: obj})
	}
	for _, t := range ix.byIface[obj] {
		if types.Identical(t, src) {
			return
		}
	}
	if ix.byIface == nil {
		ix.byIface = make(map[*types.TypeName][]types.Type)
	}
	ix.byIface[obj] = append(ix.byIface[obj], src)
}

// maxConvs bounds the conversions kept for reportIfaceRetries.
const maxConvs = 10000

// implSend reports whether a call of the interface method fn sends because
// every concrete type converted into the receiver's interface type in the
// package has a method of that name known to send (a send API, a function
// of this package found to send, or one with a sendsFact).
func (sn *sendIndex) implSend(call *ast.CallExpr, fn *types.Func) (sendInfo, bool) {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok || sn.impls == nil {
		return sendInfo{}, false
	}
	named, ok := types.Unalias(sn.info.TypeOf(sel.X)).(*types.Named)
	if !ok {
		return sendInfo{}, false
	}
	impls := sn.impls.byIface[named.Origin().Obj()]
	if len(impls) == 0 {
		return sendInfo{}, false
	}
	si, ok := sn.methodsSend(impls, fn)
	si.direct, si.js = false, false
	return si, ok
}
