package analyzer

import (
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// fixKind says which mechanical rewrite a raw send admits.
type fixKind int

const (
	fixNone       fixKind = iota
	fixPublish            // nc.Publish(s, d)  -> shim.Publish(nc, s, d)
	fixPublishMsg         // nc.PublishMsg(m)  -> shim.PublishMsg(nc, m)
	fixRespond            // m.Respond(d)      -> shim.Respond(m, d, nil)
)

// sendKind says what a send does, which decides the advice of a retry
// finding.
type sendKind uint8

const (
	kindPublish   sendKind = iota // a Core NATS publish
	kindRequest                   // request/reply: a responder runs
	kindReply                     // a reply to a request
	kindJetStream                 // a JetStream publish, de-duplicated by message ID
	kindStore                     // a claim-check upload (claimcheck (*Store).Prepare)
	kindKV                        // a JetStream KeyValue Put: a repeat writes another revision
	// kindKVGuarded is a KeyValue Create or Update: a repeat after a
	// stored first is refused (the key exists, the revision moved on),
	// so retrying one never writes twice; a raw send, not a retried one.
	kindKVGuarded
)

// rawSend describes one raw NATS send API.
type rawSend struct {
	display string  // how messages name the API, e.g. "(*nats.Conn).Publish"
	advice  string  // what to use instead and why
	fix     fixKind // mechanical rewrite, if any
	kind    sendKind
}

// rawSendOf returns the description of the raw send API with the given
// funcKey.
func rawSendOf(key string) (rawSend, bool) {
	rs, ok := rawSends[key]
	return rs, ok
}

// shimSendOf returns the description of the shim or claimcheck send with
// the given funcKey.
func shimSendOf(key string) (shimSend, bool) {
	ss, ok := shimSends[key]
	return ss, ok
}

// shimSend describes a send through the shim or claimcheck packages: not a
// raw send, but still a send for the retry check.
type shimSend struct {
	display string
	kind    sendKind // kindJetStream: a JetStream publish
}

// funcKey returns "pkgpath.Name" for a package-level function and
// "pkgpath.Type.Name" for a method whose receiver (after removing one
// pointer) is a named type, including interface methods declared in a named
// interface. It returns "" for anything else (methods of unnamed interfaces,
// builtins). Instantiated generic functions and methods are keyed by their
// origin.
func funcKey(fn *types.Func) string {
	if fn == nil {
		return ""
	}
	fn = fn.Origin()
	pkg := fn.Pkg()
	if pkg == nil {
		return ""
	}
	sig, ok := fn.Type().(*types.Signature)
	if !ok {
		return ""
	}
	recv := sig.Recv()
	if recv == nil {
		return pkg.Path() + "." + fn.Name()
	}
	name := recvTypeName(recv.Type())
	if name == "" {
		return ""
	}
	return pkg.Path() + "." + name + "." + fn.Name()
}

// recvTypeName returns the name of a receiver's named type, looking through
// one pointer and aliases; "" if the type is not named.
func recvTypeName(t types.Type) string {
	t = types.Unalias(t)
	if p, ok := t.(*types.Pointer); ok {
		t = types.Unalias(p.Elem())
	}
	if n, ok := t.(*types.Named); ok {
		return n.Obj().Name()
	}
	return ""
}

// isConnect reports whether fn is nats.Connect or (nats.Options).Connect.
func isConnect(fn *types.Func) (options bool, ok bool) {
	switch funcKey(fn) {
	case connectFunc:
		return false, true
	case optionsConnect:
		return true, true
	}
	return false, false
}

// isKnownShim reports whether path is one of natssend's own packages whose
// sends are listed explicitly (shimSendOf): the shim and claimcheck
// packages, the packages below them and their external test packages.
func isKnownShim(path string) bool {
	path = strings.TrimSuffix(path, "_test")
	for _, p := range []string{shimPath, claimcheckPath} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// isNATSPackage reports whether path is nats.go or one of its packages.
func isNATSPackage(path string) bool {
	return path == natsPath || strings.HasPrefix(path, natsPath+"/")
}

// isNamed reports whether t (after one pointer) is the named type pkgpath.name.
func isNamed(t types.Type, pkgpath, name string) bool {
	t = types.Unalias(t)
	if p, ok := t.(*types.Pointer); ok {
		t = types.Unalias(p.Elem())
	}
	n, ok := t.(*types.Named)
	if !ok {
		return false
	}
	obj := n.Obj()
	return obj.Name() == name && obj.Pkg() != nil && obj.Pkg().Path() == pkgpath
}

// usesNATSFact marks a package that imports nats.go, directly or through
// other packages. Reading it from the direct imports' facts rather than
// walking types.Package.Imports gives the same answer under every driver:
// a package read from export data lists only the packages its export data
// mentions, so a package that keeps its nats.go values to itself would
// hide the dependency from its importers under go vet.
type usesNATSFact struct{}

// AFact marks usesNATSFact as an analysis.Fact.
func (*usesNATSFact) AFact() {}

func (*usesNATSFact) String() string { return "uses nats.go" }

// dependsOnNATS reports whether the package is, or transitively imports, a
// nats.go package, and exports usesNATSFact for it. Only such packages can
// contain a send, so the analyzer skips all others (the standard library
// in particular) after a comment scan.
func dependsOnNATS(pass *analysis.Pass) bool {
	if isNATSPackage(pass.Pkg.Path()) {
		return true
	}
	for _, imp := range pass.Pkg.Imports() {
		if isNATSPackage(imp.Path()) || pass.ImportPackageFact(imp, new(usesNATSFact)) {
			if pass.Pkg.Name() != "main" { // a command is not imported
				pass.ExportPackageFact(new(usesNATSFact))
			}
			return true
		}
	}
	return false
}
