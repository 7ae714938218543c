package shim_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// infoLiar is a dialer whose connections rewrite the max_payload the server
// announces in INFO, so that nats.go's own client-side check lets oversized
// messages through and the server, not the client, decides.
type infoLiar struct{}

func (infoLiar) Dial(network, address string) (net.Conn, error) {
	c, err := net.Dial(network, address)
	if err != nil {
		return nil, err
	}
	return &liarConn{Conn: c, br: bufio.NewReader(c)}, nil
}

type liarConn struct {
	net.Conn
	br      *bufio.Reader
	pending []byte
}

var maxPayloadField = regexp.MustCompile(`"max_payload":\d+`)

// Read hands out the server's protocol lines with INFO rewritten. The
// connection is only used to publish, so every server line is a control
// line (INFO, PING, PONG, +OK, -ERR).
func (c *liarConn) Read(p []byte) (int, error) {
	if len(c.pending) == 0 {
		line, err := c.br.ReadBytes('\n')
		if len(line) == 0 {
			return 0, err
		}
		if bytes.HasPrefix(line, []byte("INFO ")) {
			line = maxPayloadField.ReplaceAll(line, []byte(`"max_payload":67108864`))
		}
		c.pending = line
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

func randomHeader(r *rand.Rand) nats.Header {
	keys := []string{"A", "Trace-Id", "Authorization", "X-Tenant", "Nats-Msg-Id"}
	h := nats.Header{}
	for range r.IntN(5) {
		k := keys[r.IntN(len(keys))]
		v := strings.Repeat("v", r.IntN(40))
		switch r.IntN(4) {
		case 0:
			v = "  " + v + " \t"
		case 1:
			v = v + "\r\n"
		}
		h.Add(k, v)
	}
	if len(h) == 0 && r.IntN(2) == 0 {
		return nil
	}
	return h
}

// TestServerAcceptsExactlyMsgSizeAtMostLimit sends 10,000 messages of
// limit-3 .. limit+3 bytes with random headers past the client's own check
// and lets the real server judge them: it must accept exactly those with
// MsgSize <= max_payload.
func TestServerAcceptsExactlyMsgSizeAtMostLimit(t *testing.T) {
	t.Parallel()
	const limit = 1024
	s := natstest.Start(t, natstest.MaxPayload(limit))
	r := rand.New(rand.NewPCG(1, 2))
	n := 10000
	if testing.Short() {
		n = 300
	}
	dial := func() *nats.Conn {
		nc, err := nats.Connect(s.URL(), nats.SetCustomDialer(infoLiar{}), nats.NoReconnect())
		if err != nil {
			t.Fatal(err)
		}
		if nc.MaxPayload() <= limit {
			t.Fatal("the INFO rewrite did not take")
		}
		return nc
	}
	nc := dial()
	defer func() { nc.Close() }()
	var accepted, refused int
	for i := range n {
		h := randomHeader(r)
		want := limit - 3 + r.IntN(7)
		body := want - shim.HeaderSize(h)
		m := &nats.Msg{Subject: "boundary", Header: h, Data: make([]byte, body)}
		if shim.MsgSize(m) != want {
			t.Fatalf("test bug: size %d, want %d", shim.MsgSize(m), want)
		}
		pubErr := nc.PublishMsg(m)
		flushErr := nc.FlushTimeout(5 * time.Second)
		ok := pubErr == nil && flushErr == nil && !nc.IsClosed()
		if ok != (want <= limit) {
			t.Fatalf("message %d: MsgSize %d, limit %d: server accepted=%v (publish %v, flush %v, last %v)",
				i, want, limit, ok, pubErr, flushErr, nc.LastError())
		}
		if ok {
			accepted++
			continue
		}
		if le := nc.LastError(); le == nil || !strings.Contains(strings.ToLower(le.Error()), "maximum payload") {
			t.Fatalf("message %d: connection failed for another reason: %v / %v", i, le, flushErr)
		}
		refused++
		nc.Close()
		nc = dial()
	}
	if accepted == 0 || refused == 0 {
		t.Fatalf("degenerate sample: %d accepted, %d refused", accepted, refused)
	}
	t.Logf("%d accepted, %d refused by the server", accepted, refused)
}

// TestShimNeverGetsConnectionClosed sends 10,000 random boundary requests through
// the shim: those that fit are delivered, the others are refused locally,
// and the connection is never closed.
func TestShimNeverGetsConnectionClosed(t *testing.T) {
	t.Parallel()
	const limit = 1024
	s := natstest.Start(t, natstest.MaxPayload(limit))
	nc, err := shim.Connect(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	echo, err := shim.Connect(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	// The responder answers with the size it received.
	if _, err := echo.Subscribe("svc", func(m *nats.Msg) {
		_ = shim.Respond(m, []byte(strconv.Itoa(shim.MsgSize(m))), nil)
	}); err != nil {
		t.Fatal(err)
	}
	if err := echo.Flush(); err != nil {
		t.Fatal(err)
	}
	const timeout = 10 * time.Second
	c := shim.NewClient(nc, shim.WithTimeout(timeout))
	warm(t, c)
	r := rand.New(rand.NewPCG(3, 4))
	n := 10000
	if testing.Short() {
		n = 200
	}
	var sent, refusedN int
	for i := range n {
		h := randomHeader(r)
		// The client adds the timeout header (with no context deadline its
		// value is the client's timeout in milliseconds) and the limit its
		// connection accepts.
		full := nats.Header{}
		for k, v := range h {
			full[k] = v
		}
		full[shim.HeaderTimeout] = []string{"10000"}
		full[shim.HeaderMaxPayload] = []string{strconv.Itoa(limit)}
		want := limit - 3 + r.IntN(7)
		body := want - shim.HeaderSize(full)
		reply, err := c.RequestMsg(context.Background(), &nats.Msg{Subject: "svc", Header: h, Data: make([]byte, body)})
		// The timeout header's value is normally "10000"; a stall of over a
		// millisecond inside the call makes it "9999", one byte less. The
		// property holds either way: sent exactly when the size the server
		// saw fits, refused exactly when the size the client counted does not.
		var se *shim.Error
		switch {
		case err == nil:
			seen, _ := strconv.Atoi(string(reply.Data))
			if seen > limit || seen < want-1 || seen > want {
				t.Fatalf("request %d: responder saw %d bytes, meant %d (limit %d)", i, seen, want, limit)
			}
			sent++
		case errors.Is(err, shim.ErrPayloadTooLarge) && errors.As(err, &se):
			if se.Sent || se.Limit != limit || se.Size <= limit || se.Size < int64(want-1) || se.Size > int64(want) {
				t.Fatalf("request %d of %d bytes (limit %d): bad refusal %#v", i, want, limit, se)
			}
			refusedN++
		default:
			t.Fatalf("request %d of %d bytes (limit %d) failed: %v", i, want, limit, err)
		}
		if nc.IsClosed() {
			t.Fatalf("connection closed after request %d: %v", i, nc.LastError())
		}
	}
	if sent == 0 || refusedN == 0 {
		t.Fatalf("degenerate sample: %d sent, %d refused", sent, refusedN)
	}
}
