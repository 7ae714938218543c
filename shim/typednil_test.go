package shim_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// validate returns a nil *shim.Error when v is valid: returned as an
// error, that is a non-nil error holding a nil pointer (a typed nil).
func validate(v string) *shim.Error {
	if v == "" {
		return &shim.Error{Code: shim.CodeInvalidArgument, Message: "empty"}
	}
	return nil
}

// TestTypedNilErrorIsNoError: a handler that returns a nil *Error as its
// error (the typed-nil slip) answers as if it returned nil, in Handler,
// JSONHandler and StreamHandler alike, and the error helpers take such a
// value for no error instead of panicking on it.
func TestTypedNilErrorIsNoError(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	rnc := connect(t, s.URL())
	subs := map[string]nats.MsgHandler{
		"plain": shim.Handler(func(_ context.Context, m *nats.Msg) ([]byte, error) {
			return []byte("ok"), validate(string(m.Data))
		}, shim.Conn(rnc)),
		"json": shim.JSONHandler(func(_ context.Context, req string) (string, error) {
			return "ok", validate(req)
		}, shim.Conn(rnc)),
	}
	for subj, h := range subs {
		if _, err := rnc.Subscribe(subj, h); err != nil {
			t.Fatal(err)
		}
	}
	serveStreamOn(t, rnc, "stream", func(_ context.Context, m *nats.Msg, w *shim.StreamWriter) error {
		if _, err := w.Write([]byte("ok")); err != nil {
			return err
		}
		return validate(string(m.Data))
	})
	_ = rnc.Flush()
	c := shim.NewClient(connect(t, s.URL()), shim.WithTimeout(5*time.Second))
	if r, err := c.Request(context.Background(), "plain", []byte("v")); err != nil || string(r.Data) != "ok" {
		t.Errorf("Handler: %v, %v", r, err)
	}
	if r, err := c.Request(context.Background(), "json", []byte(`"v"`)); err != nil || string(r.Data) != `"ok"` {
		t.Errorf("JSONHandler: %v, %v", r, err)
	}
	rs, err := c.RequestStream(context.Background(), "stream", []byte("v"))
	if err != nil {
		t.Fatalf("StreamHandler: %v", err)
	}
	var buf [8]byte
	n, _ := rs.Read(buf[:])
	if _, err := rs.Read(buf[n:]); err == nil || err.Error() != "EOF" || string(buf[:n]) != "ok" {
		t.Errorf("StreamHandler: %q, %v", buf[:n], err)
	}
	_ = rs.Close()

	// Held in an error, a nil *Error is a non-nil error: never OutcomeOK,
	// and nothing says it did not run; wrapped, the same, and no panic.
	var err2 error = validate("v")
	for _, e := range []error{err2, fmt.Errorf("wrapped: %w", err2)} {
		if shim.Classify(e) != shim.OutcomeUnknown || !shim.MayHaveRun(e) || e.Error() == "" {
			t.Errorf("%v: Classify %v, MayHaveRun %v", e, shim.Classify(e), shim.MayHaveRun(e))
		}
	}
	runs := 0
	if err := shim.Retry(context.Background(), func(context.Context) error { runs++; return validate("v") }); err != nil || runs != 1 {
		t.Errorf("Retry of an op returning a typed nil: %v after %d runs", err, runs)
	}
}
