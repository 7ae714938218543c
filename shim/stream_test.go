package shim_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// serveStream subscribes a StreamHandler for fn on subject with a fresh
// connection (given to the handler with Conn) and returns the connection.
func serveStream(t testing.TB, url, subject string, fn shim.StreamHandlerFunc, opts ...shim.HandlerOption) *nats.Conn {
	t.Helper()
	nc := connect(t, url)
	if _, err := nc.Subscribe(subject, shim.StreamHandler(fn, append(opts, shim.Conn(nc))...)); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return nc
}

// writeAll is a StreamHandlerFunc writing body in writes of chunk bytes.
func writeAll(body []byte, chunk int) shim.StreamHandlerFunc {
	return func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
		for len(body) > 0 {
			n := min(chunk, len(body))
			if _, err := w.Write(body[:n]); err != nil {
				return err
			}
			body = body[n:]
		}
		return nil
	}
}

// readAll reads rs to its end and closes it.
func readAll(t testing.TB, rs *shim.ReplyStream) ([]byte, error) {
	t.Helper()
	defer rs.Close()
	return io.ReadAll(rs)
}

// settle waits until the number of goroutines is back to at most n.
func settle(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestStreamRoundTrip(t *testing.T) {
	s := natstest.Start(t, natstest.MaxPayload(64<<10))
	body := payload(3<<20+123, 7)
	serveStream(t, s.URL(), "export", func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
		w.Header().Set("Content-Type", "application/octet-stream")
		return writeAll(body, 10_000)(ctx, req, w)
	})
	c := shim.NewClient(connect(t, s.URL()))
	rs, err := c.RequestStream(context.Background(), "export", []byte("all"))
	if err != nil {
		t.Fatal(err)
	}
	if got := rs.Header().Get("Content-Type"); got != "application/octet-stream" {
		t.Errorf("header %q", got)
	}
	got, err := readAll(t, rs)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if !bytes.Equal(got, body) {
		t.Fatalf("got %d bytes, want %d (equal prefix: %v)", len(got), len(body), bytes.HasPrefix(body, got))
	}
	if n, err := rs.Read(make([]byte, 1)); n != 0 || !errors.Is(err, shim.ErrStreamClosed) {
		t.Errorf("Read after Close: %d, %v", n, err)
	}
}

func TestStreamEmptyAndFlush(t *testing.T) {
	s := natstest.Start(t)
	tokens := make(chan string)
	serveStream(t, s.URL(), "empty", func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error { return nil })
	serveStream(t, s.URL(), "tokens", func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
		for tok := range tokens {
			if _, err := io.WriteString(w, tok); err != nil {
				return err
			}
			if err := w.Flush(); err != nil {
				return err
			}
		}
		return nil
	})
	c := shim.NewClient(connect(t, s.URL()))
	rs, err := c.RequestStream(context.Background(), "empty", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(t, rs); err != nil || len(got) != 0 {
		t.Fatalf("empty stream: %q, %v", got, err)
	}

	go func() { tokens <- "hel" }()
	rs, err = c.RequestStream(context.Background(), "tokens", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	buf := make([]byte, 64)
	for _, want := range []string{"hel", "lo", " world"} {
		if want != "hel" {
			tokens <- want
		}
		n, err := rs.Read(buf)
		if err != nil || string(buf[:n]) != want {
			t.Fatalf("token: %q, %v; want %q", buf[:n], err, want)
		}
	}
	close(tokens)
	if n, err := rs.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("end: %d, %v", n, err)
	}
}
