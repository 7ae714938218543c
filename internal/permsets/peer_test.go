package permsets

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/shim"
)

// echo answers a request with its body.
func echo(_ context.Context, req *nats.Msg) ([]byte, error) { return req.Data, nil }

// prepare stores want as the peer and returns the claim check on
// eventSubject.
func (e *env) prepare(ctx context.Context, want []byte) *nats.Msg {
	e.t.Helper()
	ref, err := e.peerSt.Prepare(ctx, &nats.Msg{Subject: eventSubject, Data: want}, 0)
	if err != nil || !claimcheck.IsClaimCheck(ref) {
		e.t.Fatalf("the peer's Prepare: %v", err)
	}
	return ref
}

// serveEcho serves echo as the peer, reading and writing claim checks.
func (e *env) serveEcho() {
	e.t.Helper()
	if _, err := shim.Serve(e.peer, echoSubject, shim.Unary(echo, shim.ServeClaimChecks(e.peerSt))); err != nil {
		e.t.Fatal(err)
	}
	if err := e.peer.Flush(); err != nil { // the server knows the subscription
		e.t.Fatal(err)
	}
}

// serveLost answers every request as the peer with a claim check whose
// payload is not stored.
func (e *env) serveLost() {
	e.t.Helper()
	_, err := e.peer.Subscribe(lostSubject, func(m *nats.Msg) {
		reply := &nats.Msg{Header: nats.Header{}}
		reply.Header.Set(claimcheck.HeaderRef, goneName)
		reply.Header.Set(claimcheck.HeaderSize, "100000")
		_ = m.RespondMsg(reply) //natssend:reviewed a test's hand-made reference to a payload that is gone, far below the limit
	})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.peer.Flush(); err != nil {
		e.t.Fatal(err)
	}
}

// serveExport serves the stream of exportBody as the peer.
func (e *env) serveExport(errs chan<- error) {
	e.t.Helper()
	if err := serveExport(e.peer, errs); err != nil {
		e.t.Fatal(err)
	}
	if err := e.peer.Flush(); err != nil {
		e.t.Fatal(err)
	}
}

// exportBody is what the export stream sends.
var exportBody = payload(streamBody, 12)

// serveExport serves the export stream on nc, reporting the handler's
// adapter's errors to errs (when not nil).
func serveExport(nc *nats.Conn, errs chan<- error) error {
	var opts []shim.HandlerOption
	if errs != nil {
		opts = append(opts, shim.OnError(func(_ *nats.Msg, err error) { errs <- err }))
	}
	_, err := shim.Serve(nc, exportSubject, shim.Stream(func(_ context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		for off := 0; off < len(exportBody); off += 16 << 10 {
			if _, err := w.Write(exportBody[off:min(off+16<<10, len(exportBody))]); err != nil {
				return err
			}
		}
		return nil
	}, opts...))
	return err
}

// readExport reads the export stream with c.
func readExport(ctx context.Context, c *shim.Client) error {
	rs, err := c.RequestStream(ctx, exportSubject, nil, shim.StreamWindow(streamWindow))
	if err != nil {
		return err
	}
	defer func() { _ = rs.Close() }()
	data, err := io.ReadAll(rs)
	if err != nil {
		return err
	}
	return same("the stream", data, exportBody)
}

// answered runs call, the peer's call to the role's responder, and
// returns the responder's first reported error if it reports one before
// the call ends (or had reported one when it ended), else call's result.
func answered(ctx context.Context, errs <-chan error, call func() error) error {
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-errs:
		return err
	case err := <-done:
		select {
		case rerr := <-errs:
			return rerr
		default:
		}
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// until polls cond until it holds, an error arrives on errs or ctx ends.
func (e *env) until(ctx context.Context, errs <-chan error, what string, cond func() (bool, error)) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case err := <-errs:
			return err
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-tick.C:
		}
	}
}

// bucketEmpty waits until the bucket holds nothing: every payload was
// deleted.
func (e *env) bucketEmpty(ctx context.Context, errs <-chan error) error {
	js, err := jetstream.New(e.peer)
	if err != nil {
		return err
	}
	return e.until(ctx, errs, "the bucket to be empty (every payload deleted)", func() (bool, error) {
		str, err := js.Stream(ctx, "OBJ_"+bucket)
		if err != nil {
			return false, err
		}
		if n := str.CachedInfo().State.Msgs; n != 0 {
			return false, nil
		}
		return true, nil
	})
}
