package rawsend

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"

	"rawsend/other"
)

func coreSends(ctx context.Context, nc *nats.Conn, m *nats.Msg) { // want coreSends:`sends via \(\*nats.Conn\).Publish`
	_ = nc.Publish("a", nil)                       // want `raw \(\*nats\.Conn\)\.Publish bypasses exact sizing: use shim\.Publish`
	_ = nc.PublishMsg(m)                           // want `raw \(\*nats\.Conn\)\.PublishMsg bypasses exact sizing: use shim\.PublishMsg`
	_ = nc.PublishRequest("a", "b", nil)           // want `raw \(\*nats\.Conn\)\.PublishRequest sends to a long-lived reply subject with no size cap: use \(\*shim\.Client\)\.RequestMany, or //natssend:reviewed <reason>`
	_, _ = nc.Request("a", nil, time.Second)       // want `raw \(\*nats\.Conn\)\.Request can be replayed after its timeout and is not size-capped: use \(\*shim\.Client\)\.Request`
	_, _ = nc.RequestMsg(m, time.Second)           // want `raw \(\*nats\.Conn\)\.RequestMsg can be replayed after its timeout and is not size-capped: use \(\*shim\.Client\)\.RequestMsg`
	_, _ = nc.RequestWithContext(ctx, "a", nil)    // want `raw \(\*nats\.Conn\)\.RequestWithContext can be replayed after its timeout and is not size-capped: use \(\*shim\.Client\)\.Request`
	_, _ = nc.RequestMsgWithContext(ctx, m)        // want `raw \(\*nats\.Conn\)\.RequestMsgWithContext can be replayed after its timeout and is not size-capped: use \(\*shim\.Client\)\.RequestMsg`
	_ = m.Respond(nil)                             // want `raw \(\*nats\.Msg\)\.Respond drops an oversized reply and the caller waits for a timeout: use shim\.Respond`
	_ = m.RespondMsg(&nats.Msg{})                  // want `raw \(\*nats\.Msg\)\.RespondMsg drops an oversized reply and the caller waits for a timeout: use shim\.Respond with its data and header`
	_, _ = nc.Subscribe("a", func(m *nats.Msg) {}) // not a send
	_ = nc.Flush()                                 // not a send
}

func jetStreams(ctx context.Context, js nats.JetStreamContext, legacy nats.JetStream, njs jetstream.JetStream, pub jetstream.Publisher, m *nats.Msg) { // want jetStreams:`sends via \(nats.JetStream\).Publish`
	_, _ = js.Publish("a", nil)          // want `raw \(nats\.JetStream\)\.Publish bypasses claim checks, so an oversized message is refused: use claimcheck \(\*Store\)\.PublishJetStream`
	_, _ = js.PublishMsg(m)              // want `raw \(nats.JetStream\).PublishMsg`
	_, _ = legacy.PublishAsync("a", nil) // want `raw \(nats.JetStream\).PublishAsync`
	_, _ = legacy.PublishMsgAsync(m)     // want `raw \(nats.JetStream\).PublishMsgAsync`
	_, _ = njs.Publish(ctx, "a", nil)    // want `raw \(jetstream.Publisher\).Publish bypasses claim checks`
	_, _ = njs.PublishMsg(ctx, m)        // want `raw \(jetstream.Publisher\).PublishMsg`
	_, _ = pub.PublishAsync("a", nil)    // want `raw \(jetstream.Publisher\).PublishAsync`
	_, _ = njs.PublishMsgAsync(m)        // want `raw \(jetstream.Publisher\).PublishMsgAsync`
	_ = njs.PublishAsyncPending()        // not a send
	_ = legacy.PublishAsyncPending()     // not a send
}

func microReplies(req micro.Request) { // want microReplies:`sends via \(micro.Request\).Respond`
	_ = req.Respond(nil)              // want `raw \(micro\.Request\)\.Respond loses an oversized reply \(micro wraps ErrMaxPayload\): use shim\.RespondMicro`
	_ = req.RespondJSON(struct{}{})   // want `raw \(micro\.Request\)\.RespondJSON loses an oversized reply \(micro wraps ErrMaxPayload\): encode the value and use shim\.RespondMicro`
	_ = req.Error("500", "boom", nil) // want `raw \(micro\.Request\)\.Error loses an oversized reply \(micro wraps ErrMaxPayload\): use shim\.RespondMicroError`
	_ = req.Data()                    // not a send
}

func encoded(ec *nats.EncodedConn) { // want encoded:`sends via \(\*nats.EncodedConn\).Publish`
	_ = ec.Publish("a", 1)                   // want `raw \(\*nats\.EncodedConn\)\.Publish bypasses exact sizing: encode the value and use shim\.Publish`
	_ = ec.PublishRequest("a", "b", 1)       // want `raw \(\*nats.EncodedConn\).PublishRequest sends to a long-lived reply subject with no size cap: use \(\*shim\.Client\)\.RequestMany`
	_ = ec.Request("a", 1, nil, time.Second) // want `raw \(\*nats\.EncodedConn\)\.Request can be replayed after its timeout and is not size-capped: encode the value and use \(\*shim\.Client\)\.Request`
}

// Method values, method expressions, go and defer, closures.
func indirect(nc *nats.Conn, m *nats.Msg) { // want indirect:`sends via \(\*nats.Conn\).PublishMsg`
	f := nc.Publish // want `raw \(\*nats\.Conn\)\.Publish taken as a function value bypasses exact sizing: use shim\.Publish`
	_ = f("a", nil)
	g := (*nats.Conn).Publish // want `raw \(\*nats.Conn\).Publish taken as a function value`
	_ = g(nc, "a", nil)
	_ = (*nats.Conn).PublishMsg(nc, m) // want `raw \(\*nats.Conn\).PublishMsg bypasses`
	go nc.Publish("a", nil)            // want `raw \(\*nats.Conn\).Publish bypasses`
	defer m.Respond(nil)               // want `raw \(\*nats.Msg\).Respond`
	func() {
		_ = nc.Publish("a", nil) // want `raw \(\*nats.Conn\).Publish bypasses`
	}()
	_ = (nc.Publish)("a", nil) // want `raw \(\*nats.Conn\).Publish bypasses`
	h := m.Respond             // want `raw \(\*nats.Msg\).Respond taken as a function value`
	_ = h
}

// Embedding *nats.Conn promotes its methods: still raw sends.
type service struct {
	*nats.Conn
	name string
}

type wrapped struct{ service }

func embedded(s *service, w wrapped, v nats.Conn) { // want embedded:`sends via \(\*nats.Conn\).Publish`
	_ = s.Publish("a", nil)       // want `raw \(\*nats.Conn\).Publish bypasses`
	_ = w.Publish("a", nil)       // want `raw \(\*nats.Conn\).Publish bypasses`
	_ = s.Conn.Publish("a", nil)  // want `raw \(\*nats.Conn\).Publish bypasses`
	_ = v.Publish("a", nil)       // want `raw \(\*nats.Conn\).Publish bypasses`
	_, _ = s.Request("a", nil, 0) // want `raw \(\*nats\.Conn\)\.Request can be replayed after its timeout and is not size-capped: use \(\*shim\.Client\)\.Request`
}

var pkgLevel = (*nats.Conn).Publish // want `raw \(\*nats.Conn\).Publish taken as a function value`

// Negative cases: look-alikes that are not nats.go.

type Conn struct{}

func (c *Conn) Publish(subj string, data []byte) error { return nil }

type valueConn struct{}

func (c valueConn) Publish(subj string, data []byte) error { return nil }
func (c valueConn) Request(subj string, data []byte) error { return nil }

type Msg struct{}

func (m Msg) Respond(data []byte) error { return nil }

func Publish(subj string, data []byte) error { return nil }

type publisher interface {
	Publish(subj string, data []byte) error
}

func generic[T interface{ Publish(string, []byte) error }](c T) error {
	return c.Publish("a", nil)
}

func genericPtr[T any, P interface {
	*T
	Publish(string, []byte) error
}](c P) error {
	return c.Publish("a", nil)
}

func lookalikes(oc *other.Conn, p publisher, nc *nats.Conn) {
	var c Conn
	_ = c.Publish("a", nil)
	_ = valueConn{}.Publish("a", nil)
	_ = (&valueConn{}).Request("a", nil)
	_ = Msg{}.Respond(nil)
	_ = Publish("a", nil)
	_ = other.Publish("a", nil)
	_ = oc.Publish("a", nil)
	_ = p.Publish("a", nil) // an interface: not resolvable to nats.go
	_ = generic(&c)
	_ = generic(nc) // want `\*nats.Conn instantiates generic's T, whose Publish is raw \(\*nats.Conn\).Publish`
	_ = genericPtr[Conn](&c)
	{
		nc := &c // shadows the *nats.Conn parameter
		_ = nc.Publish("a", nil)
	}
	nats := struct{ Connect func(string) error }{} // shadows the package
	_ = nats.Connect("x")
}

// Generic code that does call nats.go is still reported.
func genericSend[T any](nc *nats.Conn, v T) error { // want genericSend:`sends via \(\*nats.Conn\).Publish`
	return nc.Publish("a", nil) // want `raw \(\*nats.Conn\).Publish bypasses`
}

type box[T any] struct{ nc *nats.Conn }

func (b *box[T]) send() error { // want send:`sends via \(\*nats.Conn\).Publish`
	return b.nc.Publish("a", nil) // want `raw \(\*nats.Conn\).Publish bypasses`
}

func (b box[T]) sendValue() error { // want sendValue:`sends via \(\*nats.Conn\).Publish`
	return b.nc.Publish("a", nil) // want `raw \(\*nats.Conn\).Publish bypasses`
}
