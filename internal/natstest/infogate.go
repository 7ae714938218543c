package natstest

import (
	"bufio"
	"bytes"
	"net"
	"strconv"
	"sync"
	"time"
)

// InfoGate is a nats.CustomDialer for tests of the moment after a connect
// or reconnect. Its connections pass the server's lines on unchanged,
// except every INFO after a connection's first one (the async INFO that
// carries the account's or user's max_payload): while the channel of the
// latest Hold is open, those INFOs wait for it to be closed; with DropInfo
// they are never delivered. It reads the server's stream line by line, so
// message payloads (MSG and HMSG) pass through verbatim.
type InfoGate struct {
	// DropInfo drops every INFO after a connection's first one instead of
	// holding it. Set it before the first dial.
	DropInfo bool
	// UntilPong holds every INFO after a connection's first one until just
	// before the server's next PONG instead of until a Hold's channel is
	// closed. That is the latest a real network can deliver it (the server
	// writes it between a PONG and the next one), and it makes the
	// stale-limit window after connect and reconnect deterministic
	// instead of a race. PongDelay also holds that PONG, widening the
	// window after a reconnect (where nats.go itself flushes right away)
	// so that a test can send inside it. Set them before the first dial.
	UntilPong bool
	PongDelay time.Duration

	mu   sync.Mutex
	gate chan struct{}
}

// Hold makes the next INFOs (after each connection's first) wait until the
// returned channel is closed.
func (g *InfoGate) Hold() chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gate = make(chan struct{})
	return g.gate
}

func (g *InfoGate) wait() {
	g.mu.Lock()
	gate := g.gate
	g.mu.Unlock()
	if gate != nil {
		<-gate
	}
}

// Dial implements nats.CustomDialer.
func (g *InfoGate) Dial(network, address string) (net.Conn, error) {
	c, err := net.Dial(network, address)
	if err != nil {
		return nil, err
	}
	return &gateConn{Conn: c, br: bufio.NewReader(c), g: g}, nil
}

type gateConn struct {
	net.Conn
	br      *bufio.Reader
	g       *InfoGate
	seen    bool
	held    []byte // an INFO held until the next PONG (UntilPong)
	inMsg   int    // payload bytes (with CRLF) still to pass through verbatim
	pending []byte
}

func (c *gateConn) Read(p []byte) (int, error) {
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
		case bytes.HasPrefix(line, []byte("INFO ")) && c.seen:
			if c.g.DropInfo {
				continue
			}
			if c.g.UntilPong {
				c.held = line
				continue
			}
			c.g.wait()
		case bytes.HasPrefix(line, []byte("INFO ")):
			c.seen = true
		case bytes.HasPrefix(line, []byte("PONG")) && c.held != nil:
			line = append(c.held, line...)
			c.held = nil
			time.Sleep(c.g.PongDelay)
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
