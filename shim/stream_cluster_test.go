package shim_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

func TestStreamClusterAcrossNodes(t *testing.T) {
	cl := natstest.StartCluster(t, 3, natstest.MaxPayload(64<<10))
	body := payload(8<<20, 11)
	serveStream(t, cl.Servers[2].URL(), "export", writeAll(body, 100_000))
	cnc := connect(t, cl.Servers[0].URL())
	// The responder's subscription reaches the caller's node.
	c := shim.NewClient(cnc)
	var rs *shim.ReplyStream
	natstest.Eventually(t, 10*time.Second, func() bool {
		var err error
		rs, err = c.RequestStream(context.Background(), "export", nil, shim.Timeout(5*time.Second))
		return err == nil
	}, "the stream to start across the cluster")
	got, err := readAll(t, rs)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("got %d bytes, %v; want %d", len(got), err, len(body))
	}
}

func TestStreamServerRestart(t *testing.T) {
	s := natstest.Start(t, natstest.MaxPayload(64<<10))
	body := payload(16<<20, 12)
	var written sync.WaitGroup
	written.Add(1)
	half, restarted := make(chan struct{}), make(chan struct{})
	serveStream(t, s.URL(), "export", func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
		defer written.Done()
		for off := 0; off < len(body); off += 64 << 10 {
			if off == len(body)/2 {
				close(half)
				<-restarted // the second half is written after the restart began
			}
			if _, err := w.Write(body[off : off+64<<10]); err != nil {
				return err
			}
		}
		return nil
	})
	c := shim.NewClient(connect(t, s.URL()))
	rs, err := c.RequestStream(context.Background(), "export", nil, shim.StreamWindow(1<<20), shim.StreamIdle(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(&got, rs)
		done <- err
	}()
	<-half
	resends := shim.StreamResends()
	go func() {
		time.Sleep(50 * time.Millisecond) // the server is going down: writes meet a closed link
		close(restarted)
	}()
	s.Restart(natstest.MaxPayload(64 << 10))
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the stream neither completed nor failed within 60s of the restart")
	}
	_ = rs.Close()
	switch {
	case err == nil:
		if !bytes.Equal(got.Bytes(), body) {
			t.Fatalf("EOF after %d bytes that are not the body (%d)", got.Len(), len(body))
		}
		t.Logf("completed across the restart: %d bytes, %d resend requests", got.Len(), shim.StreamResends()-resends)
	case errors.Is(err, io.ErrUnexpectedEOF) && shim.Classify(err) == shim.OutcomeUnknown:
		if !bytes.Equal(got.Bytes(), body[:got.Len()]) {
			t.Fatalf("the %d bytes before the failure are not the body's", got.Len())
		}
		t.Logf("failed honestly after %d bytes: %v", got.Len(), err)
	default:
		t.Fatalf("after %d bytes: %v", got.Len(), err)
	}
	written.Wait()
}

func TestStreamConcurrent(t *testing.T) {
	s := natstest.Start(t, natstest.MaxPayload(16<<10))
	body := func(seed uint64) []byte { return payload(200_000+int(seed)*1000, seed) }
	for range 2 {
		rnc := connect(t, s.URL())
		for range 3 {
			if _, err := rnc.QueueSubscribe("many", "q", shim.StreamHandler(func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
				seed, err := strconv.ParseUint(string(req.Data), 10, 64)
				if err != nil {
					return shim.InvalidArgument("seed: %v", err)
				}
				w.Header().Set("Seed", string(req.Data))
				return writeAll(body(seed), 3000)(ctx, req, w)
			}, shim.Conn(rnc))); err != nil {
				t.Fatal(err)
			}
		}
		_ = rnc.Flush()
	}
	c := shim.NewClient(connect(t, s.URL()), shim.WithTimeout(30*time.Second))
	var wg sync.WaitGroup
	errs := make(chan error, 24)
	for i := range 24 {
		wg.Go(func() {
			rs, err := c.RequestStream(context.Background(), "many", []byte(strconv.Itoa(i)), shim.StreamWindow(64<<10))
			if err != nil {
				errs <- err
				return
			}
			defer rs.Close()
			h := sha256.New()
			if _, err := io.Copy(h, rs); err != nil {
				errs <- fmt.Errorf("stream %d: %w", i, err)
				return
			}
			if want := sha256.Sum256(body(uint64(i))); !bytes.Equal(h.Sum(nil), want[:]) || rs.Header().Get("Seed") != strconv.Itoa(i) {
				errs <- fmt.Errorf("stream %d: wrong body or header", i)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestStreamClaimCheckedRequest(t *testing.T) {
	e := newOverflowEnv(t)
	req := payload(300<<10, 13) // above the 64 KiB limit
	var seen []byte
	serveStreamOn(t, e.rnc, "svc", func(ctx context.Context, m *nats.Msg, w *shim.StreamWriter) error {
		seen = m.Data
		_, err := w.Write(m.Data[:1000])
		return err
	}, shim.ServeClaimChecks(e.rst))
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst))
	rs, err := c.RequestStream(context.Background(), "svc", req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, rs)
	if err != nil || !bytes.Equal(got, req[:1000]) || !bytes.Equal(seen, req) {
		t.Fatalf("%d bytes, %v; the handler saw %d bytes", len(got), err, len(seen))
	}
	natstest.Eventually(t, 5*time.Second, func() bool { return e.stored(t) == 0 }, "the request payload to be deleted")
	// Without claim checks the same request is refused before sending.
	_, err = shim.NewClient(e.nc).RequestStream(context.Background(), "svc", req)
	if !errors.Is(err, shim.ErrPayloadTooLarge) || shim.Classify(err) != shim.OutcomeNotRun {
		t.Fatalf("without claim checks: %v", err)
	}
}

// serveStreamOn subscribes a StreamHandler for fn on subject on nc.
func serveStreamOn(t testing.TB, nc *nats.Conn, subject string, fn shim.StreamHandlerFunc, opts ...shim.HandlerOption) {
	t.Helper()
	if _, err := nc.Subscribe(subject, shim.StreamHandler(fn, append(opts, shim.Conn(nc))...)); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

func TestStreamClusterNodeFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		node int // the node shut down mid-stream: the caller's (0) or the responder's (2)
	}{{"caller's node", 0}, {"responder's node", 2}} {
		t.Run(tc.name, func(t *testing.T) { streamAcrossNodeFailure(t, tc.node) })
	}
}

// streamAcrossNodeFailure streams 16 MiB from a responder on n3 (failing
// over to n2) to a caller on n1 (failing over to n2) and shuts node down
// half-way: the stream completes with every byte or fails honestly.
func streamAcrossNodeFailure(t *testing.T, node int) {
	cl := natstest.StartCluster(t, 3, natstest.MaxPayload(64<<10))
	body := payload(16<<20, 14)
	half, failed := make(chan struct{}), make(chan struct{})
	rnc := connect(t, cl.Servers[2].URL()+","+cl.Servers[1].URL(), nats.DontRandomize())
	serveStreamOn(t, rnc, "export", func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
		for off := 0; off < len(body); off += 64 << 10 {
			if off == len(body)/2 {
				close(half)
				<-failed // the second half is written after the node is gone
			}
			if _, err := w.Write(body[off : off+64<<10]); err != nil {
				return err
			}
		}
		return nil
	})
	cnc := connect(t, cl.Servers[0].URL()+","+cl.Servers[1].URL(), nats.DontRandomize())
	c := shim.NewClient(cnc)
	var rs *shim.ReplyStream
	natstest.Eventually(t, 10*time.Second, func() bool {
		var err error
		rs, err = c.RequestStream(context.Background(), "export", nil, shim.Timeout(5*time.Second), shim.StreamWindow(1<<20))
		return err == nil
	}, "the stream to start across the cluster")
	var got bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(&got, rs)
		done <- err
	}()
	<-half
	resends := shim.StreamResends()
	cl.Servers[node].Shutdown()
	close(failed)
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the stream neither completed nor failed within 60s of the node's failure")
	}
	_ = rs.Close()
	switch {
	case err == nil && bytes.Equal(got.Bytes(), body):
		t.Logf("completed across the failover: %d bytes, %d resend requests", got.Len(), shim.StreamResends()-resends)
	case err != nil && errors.Is(err, io.ErrUnexpectedEOF) && bytes.Equal(got.Bytes(), body[:got.Len()]):
		t.Logf("failed honestly after %d bytes: %v", got.Len(), err)
	default:
		t.Fatalf("after %d bytes (a prefix: %v): %v", got.Len(), bytes.Equal(got.Bytes(), body[:min(got.Len(), len(body))]), err)
	}
}
