package permsets

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// TestStream64MiBUnderDocumentedSets: a 64 MiB transfer stream between a
// caller and a responder that have only their documented permission sets
// (the responder publishes nothing but its responses, allow_responses; the
// caller publishes to the service's subjects and, as the docs say and why,
// the responder's inbox), on a server with a small max_payload, so that
// the stream takes many frames and many windows of credit.
func TestStream64MiBUnderDocumentedSets(t *testing.T) {
	t.Parallel()
	docs := snippets(t)
	caller, responder := docs["orders-stream-caller"], docs["orders-stream-responder"]
	if caller == nil || responder == nil {
		t.Fatalf("%s documents no stream caller or stream responder", docFile)
	}
	s := natstest.Start(t, natstest.MaxPayload(maxPayload),
		natstest.WithUserConfig(caller.user, password, caller.text),
		natstest.WithUserConfig(responder.user, password, responder.text))
	body := make([]byte, 64<<20)
	for i := range body {
		body[i] = byte(i) ^ byte(i>>9)
	}
	want := sha256.Sum256(body)
	errs := make(chan error, 4)
	rnc, err := shim.Connect(s.UserURL(responder.user), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	defer rnc.Close()
	if _, err := shim.Serve(rnc, exportSubject, shim.Stream(func(_ context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		_, err := io.Copy(w, bytes.NewReader(body))
		return err
	}, shim.OnError(func(_ *nats.Msg, err error) { errs <- err }))); err != nil {
		t.Fatal(err)
	}
	cnc, err := shim.Connect(s.UserURL(caller.user), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	defer cnc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rs, err := shim.NewClient(cnc).RequestStream(ctx, exportSubject, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rs.Close() }()
	h := sha256.New()
	n, err := io.Copy(h, rs)
	if err != nil || n != int64(len(body)) || !bytes.Equal(h.Sum(nil), want[:]) {
		t.Fatalf("the stream: %d bytes, %v; want the %d-byte body", n, err, len(body))
	}
	select {
	case err := <-errs:
		t.Fatalf("the responder reported %v", err)
	default:
	}
}
