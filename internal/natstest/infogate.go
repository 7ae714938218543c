package natstest

import (
	"bufio"
	"bytes"
	"net"
	"sync"
)

// InfoGate is a nats.CustomDialer for tests of the moment after a connect
// or reconnect. Its connections pass the server's lines on unchanged,
// except every INFO after a connection's first one (the async INFO that
// carries the account's or user's max_payload): while the channel of the
// latest Hold is open, those INFOs wait for it to be closed; with DropInfo
// they are never delivered. It reads the server's stream line by line, so
// it suits connections that publish and request, whose server lines are
// control lines; a message payload holding a line that starts with "INFO "
// would be taken for one.
type InfoGate struct {
	// DropInfo drops every INFO after a connection's first one instead of
	// holding it. Set it before the first dial.
	DropInfo bool

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
	pending []byte
}

func (c *gateConn) Read(p []byte) (int, error) {
	for len(c.pending) == 0 {
		line, err := c.br.ReadBytes('\n')
		if len(line) == 0 {
			return 0, err
		}
		if bytes.HasPrefix(line, []byte("INFO ")) {
			if c.seen {
				if c.g.DropInfo {
					continue
				}
				c.g.wait()
			}
			c.seen = true
		}
		c.pending = line
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}
