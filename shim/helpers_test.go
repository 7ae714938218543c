package shim_test

import (
	"bufio"
	"bytes"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

func connect(t testing.TB, url string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	opts = append([]nats.Option{nats.ReconnectWait(20 * time.Millisecond)}, opts...)
	nc, err := shim.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// serve subscribes h on subject with a fresh connection and returns it.
func serve(t testing.TB, s *natstest.Server, subject string, h nats.MsgHandler) *nats.Conn {
	t.Helper()
	nc := connect(t, s.URL())
	if _, err := nc.Subscribe(subject, h); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return nc
}

// counter counts deliveries.
type counter struct{ n atomic.Int64 }

func (c *counter) inc()       { c.n.Add(1) }
func (c *counter) get() int64 { return c.n.Load() }

// stays checks that cond holds for the whole of d.
func stays(t testing.TB, d time.Duration, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !cond() {
			t.Fatalf("%s no longer holds", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// lateInfo is a dialer whose connections hold back every INFO after the
// first until just before the next PONG. That is the latest a real network
// can deliver it (the server writes it between a PONG and the next one),
// and it makes the stale-limit window after connect and reconnect
// deterministic instead of a race.
//
// delay also holds the PONG that releases the INFO, widening the window
// after a reconnect (where nats.go itself flushes right away) so that a
// test can send inside it.
type lateInfo struct{ delay time.Duration }

func (l lateInfo) Dial(network, address string) (net.Conn, error) {
	c, err := net.Dial(network, address)
	if err != nil {
		return nil, err
	}
	return &lateInfoConn{Conn: c, br: bufio.NewReader(c), delay: l.delay}, nil
}

type lateInfoConn struct {
	net.Conn
	br       *bufio.Reader
	seenInfo bool
	held     []byte
	pending  []byte
	inMsg    int // payload bytes (with CRLF) still to pass through verbatim
	delay    time.Duration
}

func (c *lateInfoConn) Read(p []byte) (int, error) {
	for len(c.pending) == 0 {
		if c.inMsg > 0 {
			buf := make([]byte, min(c.inMsg, len(p)))
			n, err := c.br.Read(buf)
			c.inMsg -= n
			c.pending = buf[:n]
			if err != nil && n == 0 {
				return 0, err
			}
			continue
		}
		line, err := c.br.ReadBytes('\n')
		if len(line) == 0 {
			return 0, err
		}
		switch {
		case bytes.HasPrefix(line, []byte("INFO ")) && c.seenInfo:
			c.held = line
			continue
		case bytes.HasPrefix(line, []byte("INFO ")):
			c.seenInfo = true
		case bytes.HasPrefix(line, []byte("PONG")) && c.held != nil:
			line = append(c.held, line...)
			c.held = nil
			time.Sleep(c.delay)
		case bytes.HasPrefix(line, []byte("MSG ")) || bytes.HasPrefix(line, []byte("HMSG ")):
			f := bytes.Fields(line)
			size, _ := strconv.Atoi(string(f[len(f)-1]))
			c.inMsg = size + 2
		}
		c.pending = line
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}
