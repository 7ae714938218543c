package analyzer

import (
	"go/types"
	"strings"
)

// Package paths matched by the analyzer. The analyzer never imports these
// packages: it compares the package path, receiver type name and method name
// of each resolved *types.Func.
const (
	natsPath       = "github.com/nats-io/nats.go"
	jetstreamPath  = natsPath + "/jetstream"
	microPath      = natsPath + "/micro"
	shimPath       = "github.com/natssend/natssend/shim"
	claimcheckPath = "github.com/natssend/natssend/claimcheck"
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
)

// retryAdvice says why retrying a send of kind k is unsafe and what to do
// instead.
func retryAdvice(k sendKind) string {
	switch k {
	case kindRequest:
		return "a timeout can follow a request that already ran, so the retry can run it twice: reconcile (look the result up) before trying again, or make the operation idempotent"
	case kindReply:
		return "a reply that failed may still have been written, so the requester can get it twice: reply once, or make the reply idempotent for the requester"
	case kindJetStream:
		return "an error can follow a publish the stream already stored, so the retry can store it twice: use a fixed message ID (jetstream.WithMsgID) so the server de-duplicates"
	case kindStore:
		return "an error can follow an upload that already stored the payload, so the retry can store it again: reconcile before trying again"
	}
	return "nats.go mostly fails a publish before writing it, but after a flush or connection error it may already be out, so the retry can deliver it twice: de-duplicate downstream, or publish to JetStream with a fixed message ID"
}

// rawSend describes one raw NATS send API.
type rawSend struct {
	display   string  // how messages name the API, e.g. "(*nats.Conn).Publish"
	advice    string  // what to use instead and why
	fix       fixKind // mechanical rewrite, if any
	jetStream bool    // a JetStream publish: de-duplicated by message ID
	kind      sendKind
}

const (
	adviceSizing  = "bypasses claim checks and exact sizing"
	adviceRequest = "capped size, one deadline, no replay"
	adviceReply   = "the reply size is checked header-accurately; an oversized reply otherwise leaves the caller waiting for a timeout"
	adviceMicro   = "micro wraps ErrMaxPayload, so an oversized reply is lost and the caller waits for a timeout"
	adviceJS      = "bypasses claim checks: a stream's max_msg_size counts headers and body, and an oversized message is refused"
)

// rawSendOf returns the description of the raw send API with the given
// funcKey.
func rawSendOf(key string) (rawSend, bool) {
	switch key {
	case natsPath + ".Conn.Publish":
		return rawSend{"(*nats.Conn).Publish", adviceSizing + ": use shim.Publish", fixPublish, false, kindPublish}, true
	case natsPath + ".Conn.PublishMsg":
		return rawSend{"(*nats.Conn).PublishMsg", adviceSizing + ": use shim.PublishMsg", fixPublishMsg, false, kindPublish}, true
	case natsPath + ".Conn.PublishRequest":
		return rawSend{"(*nats.Conn).PublishRequest", "hand-rolls a request: use (*shim.Client).Request: " + adviceRequest, fixNone, false, kindRequest}, true
	case natsPath + ".Conn.Request":
		return rawSend{"(*nats.Conn).Request", "use (*shim.Client).Request: " + adviceRequest, fixNone, false, kindRequest}, true
	case natsPath + ".Conn.RequestWithContext":
		return rawSend{"(*nats.Conn).RequestWithContext", "use (*shim.Client).Request: " + adviceRequest, fixNone, false, kindRequest}, true
	case natsPath + ".Conn.RequestMsg":
		return rawSend{"(*nats.Conn).RequestMsg", "use (*shim.Client).RequestMsg: " + adviceRequest, fixNone, false, kindRequest}, true
	case natsPath + ".Conn.RequestMsgWithContext":
		return rawSend{"(*nats.Conn).RequestMsgWithContext", "use (*shim.Client).RequestMsg: " + adviceRequest, fixNone, false, kindRequest}, true
	case natsPath + ".Msg.Respond":
		return rawSend{"(*nats.Msg).Respond", "use shim.Respond: " + adviceReply, fixRespond, false, kindReply}, true
	case natsPath + ".Msg.RespondMsg":
		return rawSend{"(*nats.Msg).RespondMsg", "use shim.Respond with the reply's data and header: " + adviceReply, fixNone, false, kindReply}, true
	case natsPath + ".EncodedConn.Publish":
		return rawSend{"(*nats.EncodedConn).Publish", adviceSizing + ": encode the value and use shim.Publish", fixNone, false, kindPublish}, true
	case natsPath + ".EncodedConn.PublishRequest":
		return rawSend{"(*nats.EncodedConn).PublishRequest", "hand-rolls a request: encode the value and use (*shim.Client).Request: " + adviceRequest, fixNone, false, kindRequest}, true
	case natsPath + ".EncodedConn.Request":
		return rawSend{"(*nats.EncodedConn).Request", "encode the value and use (*shim.Client).Request: " + adviceRequest, fixNone, false, kindRequest}, true
	case microKey("Respond"):
		return rawSend{"(micro.Request).Respond", "use shim.RespondMicro: " + adviceMicro, fixNone, false, kindReply}, true
	case microKey("RespondJSON"):
		return rawSend{"(micro.Request).RespondJSON", "encode the value and use shim.RespondMicro: " + adviceMicro, fixNone, false, kindReply}, true
	case microKey("Error"):
		return rawSend{"(micro.Request).Error", "use shim.RespondMicroError: " + adviceMicro, fixNone, false, kindReply}, true
	}
	// JetStream publishes: legacy nats.JetStream (embedded in
	// nats.JetStreamContext; both names are accepted in case a type
	// declares the methods itself) and jetstream.Publisher (embedded in
	// jetstream.JetStream).
	var iface string
	method := key[strings.LastIndex(key, ".")+1:]
	switch strings.TrimSuffix(key, "."+method) {
	case natsPath + ".JetStream":
		iface = "nats.JetStream"
	case natsPath + ".JetStreamContext":
		iface = "nats.JetStreamContext"
	case jetstreamPath + ".Publisher":
		iface = "jetstream.Publisher"
	default:
		return rawSend{}, false
	}
	switch method {
	case "Publish", "PublishMsg", "PublishAsync", "PublishMsgAsync":
		return rawSend{
			display:   "(" + iface + ")." + method,
			advice:    adviceJS + ": use claimcheck (*Store).PublishJetStream",
			jetStream: true,
			kind:      kindJetStream,
		}, true
	}
	return rawSend{}, false
}

func microKey(method string) string { return microPath + ".Request." + method }

// shimSend describes a send through the shim or claimcheck packages: not a
// raw send, but still a send for the retry check.
type shimSend struct {
	display   string
	jetStream bool
	kind      sendKind
}

// shimSendOf returns the description of the shim or claimcheck send with
// the given funcKey.
func shimSendOf(key string) (shimSend, bool) {
	switch key {
	case shimPath + ".Publish":
		return shimSend{"shim.Publish", false, kindPublish}, true
	case shimPath + ".PublishMsg":
		return shimSend{"shim.PublishMsg", false, kindPublish}, true
	case shimPath + ".PublishContext":
		return shimSend{"shim.PublishContext", false, kindPublish}, true
	case shimPath + ".PublishMsgContext":
		return shimSend{"shim.PublishMsgContext", false, kindPublish}, true
	case shimPath + ".Client.Request":
		return shimSend{"(*shim.Client).Request", false, kindRequest}, true
	case shimPath + ".Client.RequestMsg":
		return shimSend{"(*shim.Client).RequestMsg", false, kindRequest}, true
	case shimPath + ".Respond":
		return shimSend{"shim.Respond", false, kindReply}, true
	case shimPath + ".RespondError":
		return shimSend{"shim.RespondError", false, kindReply}, true
	case shimPath + ".RespondMicro":
		return shimSend{"shim.RespondMicro", false, kindReply}, true
	case shimPath + ".RespondMicroError":
		return shimSend{"shim.RespondMicroError", false, kindReply}, true
	case claimcheckPath + ".Store.PublishMsg":
		return shimSend{"(*claimcheck.Store).PublishMsg", false, kindPublish}, true
	case claimcheckPath + ".Store.Prepare":
		return shimSend{"(*claimcheck.Store).Prepare", false, kindStore}, true
	case claimcheckPath + ".Store.PublishJetStream":
		return shimSend{"(*claimcheck.Store).PublishJetStream", true, kindJetStream}, true
	}
	return shimSend{}, false
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
	case natsPath + ".Connect":
		return false, true
	case natsPath + ".Options.Connect":
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

// dependsOnNATS reports whether pkg is, or transitively imports, a nats.go
// package. Only such packages can contain a send, so the analyzer skips all
// others (the standard library in particular) after a comment scan.
func dependsOnNATS(pkg *types.Package) bool {
	seen := make(map[*types.Package]bool)
	stack := []*types.Package{pkg}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[p] {
			continue
		}
		seen[p] = true
		if isNATSPackage(p.Path()) {
			return true
		}
		stack = append(stack, p.Imports()...)
	}
	return false
}
