package permsets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/shim"
)

// roles are the documented roles by user name: each runs every natssend
// feature its role uses, as steps of r.
var roles = map[string]func(e *env, r *run){
	"orders-publisher":        publisher,
	"orders-resolver":         func(e *env, r *run) { resolver(e, r, false) },
	"orders-resolver-delete":  func(e *env, r *run) { resolver(e, r, true) },
	"orders-caller":           caller,
	"orders-caller-cc":        callerClaimChecks,
	"orders-responder":        func(e *env, r *run) { responder(e, r, false) },
	"orders-responder-cc":     func(e *env, r *run) { responder(e, r, true) },
	"orders-stream-caller":    streamCaller,
	"orders-stream-responder": streamResponder,
}

const (
	eventSubject  = "orders.events.created"
	echoSubject   = "orders.rpc.echo"
	lostSubject   = "orders.rpc.lost"
	exportSubject = "orders.rpc.export"
	// goneName is an object name of the form claimcheck writes that no
	// test stores.
	goneName = "aaaaaaaaaaaaaaaaaaaaaaaaaa"
	// streamBody is a stream's length: many times the stream window the
	// callers grant, so that credit must flow.
	streamBody   = 512 << 10
	streamWindow = 64 << 10
)

// payload returns n bytes that differ with seed.
func payload(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i) ^ seed ^ byte(i>>8)
	}
	return b
}

// large is a payload above max_payload: a claim check.
func large(seed byte) []byte { return payload(3*maxPayload+17, seed) }

// same returns nil when got is want, else an error saying how they differ.
func same(what string, got, want []byte) error {
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%s: got %d bytes, not the %d sent", what, len(got), len(want))
	}
	return nil
}

// publisher: claimcheck.New, Store.PublishMsg of a message that fits and
// one that is claim-checked (the peer receives both and reads the stored
// payload), and Store.Prepare.
func publisher(e *env, r *run) {
	nc := e.role()
	st := e.roleStore(r, nc)
	sub, err := e.peer.SubscribeSync("orders.events.>")
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.peer.Flush(); err != nil {
		e.t.Fatal(err)
	}
	r.step("Store.PublishMsg", func(ctx context.Context) error {
		// The claim check first: a message that fits is fire-and-forget,
		// as nats.go's publish is (the server's refusal reaches only the
		// connection's error callback), while a claim check's reference is
		// checked, since its payload is stored (docs/permissions.md).
		sent := [][]byte{large(2), payload(1000, 1)}
		for _, p := range sent {
			if err := st.PublishMsg(ctx, &nats.Msg{Subject: eventSubject, Data: p}); err != nil {
				return err
			}
		}
		for _, want := range sent {
			m, err := sub.NextMsgWithContext(ctx)
			if err != nil {
				return fmt.Errorf("PublishMsg succeeded but nothing arrived: %w", err)
			}
			data, err := e.peerSt.Resolve(ctx, m)
			if err != nil {
				return fmt.Errorf("PublishMsg succeeded but the payload cannot be read: %w", err)
			}
			if err := same("the published payload", data, want); err != nil {
				return err
			}
		}
		return nil
	})
	r.step("Store.Prepare", func(ctx context.Context) error {
		want := large(14)
		ref, err := st.Prepare(ctx, &nats.Msg{Subject: eventSubject, Data: want}, 0)
		if err != nil {
			return err
		}
		data, err := e.peerSt.Resolve(ctx, ref)
		if err != nil {
			return fmt.Errorf("Prepare succeeded but the payload cannot be read: %w", err)
		}
		return same("the prepared payload", data, want)
	})
}

// resolver: claimcheck.New, Store.Subscribe (QueueSubscribe with
// DeleteAfterRead when del: the payload is then deleted), Resolve, Open,
// and Resolve of a payload that is gone (ErrMissing).
func resolver(e *env, r *run, del bool) {
	nc := e.role()
	st := e.roleStore(r, nc)
	r.step("Store.Subscribe", func(ctx context.Context) error {
		var opts []claimcheck.SubscribeOpt
		if del {
			opts = append(opts, claimcheck.DeleteAfterRead())
		}
		got := make(chan *nats.Msg, 1)
		errs := make(chan error, 4)
		h, onErr := func(m *nats.Msg) { got <- m }, func(_ *nats.Msg, err error) { errs <- err }
		subscribe := func() (*nats.Subscription, error) { return st.Subscribe("orders.events.>", h, onErr, opts...) }
		if del { // one reader per message: a queue group
			subscribe = func() (*nats.Subscription, error) {
				return st.QueueSubscribe("orders.events.>", "orders", h, onErr, opts...)
			}
		}
		sub, err := subscribe()
		if err != nil {
			return err
		}
		defer func() { _ = sub.Unsubscribe() }()
		if err := nc.FlushWithContext(ctx); err != nil {
			return err
		}
		want := large(3)
		ref := e.prepare(ctx, want)
		if err := e.peer.PublishMsg(ref); err != nil { //natssend:reviewed a test's peer sends a reference Prepare made, within the limit
			return err
		}
		select {
		case m := <-got:
			if err := same("the delivered payload", m.Data, want); err != nil {
				return err
			}
		case err := <-errs:
			return err
		case <-ctx.Done():
			return fmt.Errorf("Subscribe succeeded but nothing was delivered: %w", ctx.Err())
		}
		if !del {
			return nil
		}
		name := ref.Header.Get(claimcheck.HeaderRef)
		return e.until(ctx, errs, "the payload deleted after read", func() (bool, error) {
			_, err := e.peerSt.ObjectStore().GetInfo(ctx, name)
			if errors.Is(err, jetstream.ErrObjectNotFound) {
				return true, nil
			}
			return false, err
		})
	})
	r.step("Store.Resolve", func(ctx context.Context) error {
		want := large(4)
		data, err := st.Resolve(ctx, e.prepare(ctx, want))
		if err != nil {
			return err
		}
		return same("Resolve", data, want)
	})
	r.step("Store.Open", func(ctx context.Context) error {
		want := large(5)
		rc, err := st.Open(ctx, e.prepare(ctx, want))
		if err != nil {
			return err
		}
		defer func() { _ = rc.Close() }()
		data, err := io.ReadAll(rc)
		if err != nil {
			return err
		}
		return same("Open", data, want)
	})
	r.step("Store.Resolve of a deleted payload", func(ctx context.Context) error {
		ref := e.prepare(ctx, large(6))
		if err := e.peerSt.Discard(ctx, ref); err != nil {
			e.t.Fatal(err)
		}
		_, err := st.Resolve(ctx, ref)
		if errors.Is(err, claimcheck.ErrMissing) {
			return nil
		}
		if err == nil {
			return errors.New("a deleted payload was resolved")
		}
		return err
	})
}

// caller: Client.Request and RequestMany answered by the peer.
func caller(e *env, r *run) {
	nc := e.role()
	e.serveEcho()
	c := shim.NewClient(nc)
	r.step("Client.Request", func(ctx context.Context) error {
		want := payload(1000, 7)
		reply, err := c.Request(ctx, echoSubject, want)
		if err != nil {
			return err
		}
		return same("the reply", reply.Data, want)
	})
	r.step("Client.RequestMany", func(ctx context.Context) error {
		want := payload(500, 13)
		n := 0
		for reply, err := range c.RequestMany(ctx, echoSubject, want, shim.MaxReplies(1)) {
			if err != nil {
				return err
			}
			if err := same("the reply", reply.Data, want); err != nil {
				return err
			}
			n++
		}
		if n != 1 {
			return fmt.Errorf("RequestMany yielded %d replies, want 1", n)
		}
		return nil
	})
}

// callerClaimChecks: Client.Request with WithClaimChecks: a claim-checked
// request and reply, both payloads deleted by the caller; a claim-checked
// reply whose payload is gone is REPLY_LOST (ErrMissing).
func callerClaimChecks(e *env, r *run) {
	nc := e.role()
	e.serveEcho()
	e.serveLost()
	st := e.roleStore(r, nc)
	if !r.ok() {
		return
	}
	c := shim.NewClient(nc, shim.WithClaimChecks(st))
	r.step("Client.Request with claim checks", func(ctx context.Context) error {
		want := large(8)
		reply, err := c.Request(ctx, echoSubject, want)
		if err != nil {
			return err
		}
		if err := same("the reply", reply.Data, want); err != nil {
			return err
		}
		return e.bucketEmpty(ctx, nil)
	})
	r.step("Client.Request with a claim-checked reply that is gone", func(ctx context.Context) error {
		_, err := c.Request(ctx, lostSubject, payload(100, 9))
		if d := shim.Describe(err); d != nil && d.Code == shim.CodeReplyLost && errors.Is(err, claimcheck.ErrMissing) {
			return nil
		}
		if err == nil {
			return errors.New("a claim-checked reply whose payload is gone was read")
		}
		return err
	})
}

// responder: shim.Serve of a Unary handler (ServeQueue with
// ServeClaimChecks when cc: a claim-checked request and reply, and a
// claim-checked request whose payload is gone, which the handler never
// sees); the peer calls.
func responder(e *env, r *run, cc bool) {
	nc := e.role()
	var st *claimcheck.Store
	if cc {
		if st = e.roleStore(r, nc); !r.ok() {
			return
		}
	}
	errs := make(chan error, 16)
	opts := []shim.HandlerOption{shim.OnError(func(_ *nats.Msg, err error) { errs <- err })}
	if cc {
		opts = append(opts, shim.ServeClaimChecks(st))
	}
	r.step("shim.Serve", func(ctx context.Context) error {
		serve := func() (*nats.Subscription, error) { return shim.Serve(nc, echoSubject, shim.Unary(echo, opts...)) }
		if cc {
			serve = func() (*nats.Subscription, error) {
				return shim.ServeQueue(nc, echoSubject, "orders", shim.Unary(echo, opts...))
			}
		}
		if _, err := serve(); err != nil {
			return err
		}
		return nc.FlushWithContext(ctx)
	})
	want := payload(1000, 10)
	c := shim.NewClient(e.peer)
	if cc {
		want = large(11)
		c = shim.NewClient(e.peer, shim.WithClaimChecks(e.peerSt))
	}
	r.step("a request answered", func(ctx context.Context) error {
		return answered(ctx, errs, func() error {
			reply, err := c.Request(ctx, echoSubject, want)
			if err != nil {
				return err
			}
			return same("the reply", reply.Data, want)
		})
	})
	if !cc {
		return
	}
	r.step("a claim-checked request whose payload is gone", func(ctx context.Context) error {
		m := nats.NewMsg(echoSubject)
		m.Header.Set(claimcheck.HeaderRef, goneName)
		m.Header.Set(claimcheck.HeaderSize, "100000")
		go func() {
			_, _ = e.peer.RequestMsgWithContext(ctx, m) //natssend:reviewed a test's hand-made reference: the responder's answer is not what is checked
		}()
		select {
		case err := <-errs:
			if errors.Is(err, claimcheck.ErrMissing) {
				return nil
			}
			return err
		case <-ctx.Done():
			return fmt.Errorf("the responder reported nothing: %w", ctx.Err())
		}
	})
}

// streamCaller: Client.RequestStream of a body many windows long.
func streamCaller(e *env, r *run) {
	nc := e.role()
	e.serveExport(nil)
	c := shim.NewClient(nc)
	r.step("Client.RequestStream", func(ctx context.Context) error { return readExport(ctx, c) })
}

// streamResponder: shim.Serve of a Stream handler; the peer reads a body
// many windows long.
func streamResponder(e *env, r *run) {
	nc := e.role()
	errs := make(chan error, 16)
	r.step("shim.Serve", func(ctx context.Context) error {
		if err := serveExport(nc, errs); err != nil {
			return err
		}
		return nc.FlushWithContext(ctx)
	})
	c := shim.NewClient(e.peer)
	r.step("a stream delivered", func(ctx context.Context) error {
		return answered(ctx, errs, func() error { return readExport(ctx, c) })
	})
}
