package natstest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// Proxy is a TCP proxy between NATS clients and a test server that
// understands the protocol in both directions (control lines and the
// payload sizes of PUB, HPUB, MSG and HMSG), so that a test can act at an
// exact protocol point: cut the link before or after a client's message
// on a subject is forwarded (after: once the server has processed it),
// lose a message the server delivers, cut after a number of bytes, delay
// or stall a direction, or run a hook (restart the server, cancel a
// context) at that moment. See Rule.
//
// Clients connect to URL; every connection gets its own link to the
// target, also reconnections, which come back through the proxy (the
// server's INFO is passed on without connect_urls, so a client does not
// learn other cluster members' addresses from it).
type Proxy struct {
	tb     testing.TB
	target string
	ln     net.Listener

	mu      sync.Mutex
	rules   []*Trigger
	bytes   []*byteRule
	links   map[int]*link
	nlinks  int
	down    bool
	err     error
	closing bool
	wg      sync.WaitGroup
}

// StartProxy starts a proxy on a random loopback port in front of the
// server at target (a nats:// URL or host:port), and registers its Close
// with tb.Cleanup.
func StartProxy(tb testing.TB, target string) *Proxy {
	tb.Helper()
	if u, ok := strings.CutPrefix(target, "nats://"); ok {
		target = u
	}
	if i := strings.LastIndexByte(target, '@'); i >= 0 {
		target = target[i+1:]
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &Proxy{tb: tb, target: target, ln: ln, links: map[int]*link{}}
	p.wg.Add(1)
	go p.accept()
	tb.Cleanup(p.Close)
	return p
}

// Proxy returns a proxy in front of s (see StartProxy).
func (s *Server) Proxy(tb testing.TB) *Proxy {
	tb.Helper()
	return StartProxy(tb, fmt.Sprintf("%s:%d", s.host, s.port))
}

// URL returns the URL clients connect to.
func (p *Proxy) URL() string { return "nats://" + p.ln.Addr().String() }

// On installs a rule and returns its Trigger. Rules are checked in the
// order they were installed; when several fire on one frame, every Hook
// runs and the strongest Action (Cut, then Drop, then Delay) is taken.
func (p *Proxy) On(r Rule) *Trigger {
	t := newTrigger(r)
	p.mu.Lock()
	p.rules = append(p.rules, t)
	p.mu.Unlock()
	return t
}

// Off removes the rule of t.
func (p *Proxy) Off(t *Trigger) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, r := range p.rules {
		if r == t {
			p.rules = append(p.rules[:i:i], p.rules[i+1:]...)
			return
		}
	}
}

// CutAfterBytes cuts the link that carries the n-th byte in dir, counted
// from now over all links, right after forwarding it (a frame can be cut
// in the middle), running hook (nil for none) first.
func (p *Proxy) CutAfterBytes(dir Dir, n int64, hook func()) *Trigger {
	t := newTrigger(Rule{Dir: dir, Action: Cut})
	p.mu.Lock()
	p.bytes = append(p.bytes, &byteRule{dir: dir, left: n, hook: hook, t: t})
	p.mu.Unlock()
	return t
}

// Cut cuts every link now, abruptly, in both directions.
func (p *Proxy) Cut() {
	p.mu.Lock()
	ls := make([]*link, 0, len(p.links))
	for _, l := range p.links {
		ls = append(ls, l)
	}
	p.mu.Unlock()
	for _, l := range ls {
		l.cut()
	}
}

// SetDown makes the proxy refuse connections (accept and reset them at
// once) while down is true, so that a client whose link was cut stays
// disconnected; links already up are not affected.
func (p *Proxy) SetDown(down bool) {
	p.mu.Lock()
	p.down = down
	p.mu.Unlock()
}

// Links returns how many links the proxy has made so far (a client's
// connection and each reconnection count one).
func (p *Proxy) Links() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.nlinks
}

// Active returns how many links are up now.
func (p *Proxy) Active() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.links)
}

// Close stops the proxy, cuts every link and waits for its goroutines. It
// fails the test if the proxy met a malformed protocol line. It is safe to
// call more than once.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closing = true
	p.mu.Unlock()
	_ = p.ln.Close()
	p.Cut()
	p.wg.Wait()
	p.mu.Lock()
	err := p.err
	p.err = nil
	p.mu.Unlock()
	if err != nil {
		p.tb.Errorf("%v", err)
	}
}

func (p *Proxy) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse := p.down || p.closing
		p.mu.Unlock()
		if refuse {
			reset(c)
			continue
		}
		s, err := net.DialTimeout("tcp", p.target, 2*time.Second)
		if err != nil {
			reset(c) // the server is down: the client tries again
			continue
		}
		p.mu.Lock()
		if p.closing {
			p.mu.Unlock()
			reset(c)
			reset(s)
			continue
		}
		p.nlinks++
		l := &link{p: p, id: p.nlinks, client: c, server: s, done: make(chan struct{})}
		p.links[l.id] = l
		p.wg.Add(2)
		p.mu.Unlock()
		go l.pump(ToServer, c, s)
		go l.pump(ToClient, s, c)
	}
}

// reset closes c with a TCP reset.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// link is one client connection and its connection to the server.
type link struct {
	p              *Proxy
	id             int
	client, server net.Conn
	once           sync.Once
	done           chan struct{}

	mu    sync.Mutex
	pings []chan struct{} // PINGs to the server awaiting their PONG, in order; nil for the client's own
}

// cut closes both connections with a reset.
func (l *link) cut() { l.end(true) }

func (l *link) end(abrupt bool) {
	l.once.Do(func() {
		close(l.done)
		if abrupt {
			reset(l.client)
			reset(l.server)
		} else {
			_ = l.client.Close()
			_ = l.server.Close()
		}
		l.p.mu.Lock()
		delete(l.p.links, l.id)
		l.p.mu.Unlock()
	})
}

// pushPing records a PING written to the server: ours (a channel to
// close at its PONG) or the client's (nil).
func (l *link) pushPing(ch chan struct{}) {
	l.mu.Lock()
	l.pings = append(l.pings, ch)
	l.mu.Unlock()
}

// popPong matches a PONG from the server with its PING and reports
// whether it answers one of ours (which the client must not see).
func (l *link) popPong() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pings) == 0 {
		return false
	}
	ch := l.pings[0]
	l.pings = l.pings[1:]
	if ch == nil {
		return false
	}
	close(ch)
	return true
}

// pump forwards one direction of the link frame by frame.
func (l *link) pump(dir Dir, src, dst net.Conn) {
	defer l.p.wg.Done()
	br := bufio.NewReaderSize(src, 64<<10)
	w := &fwd{l: l, dir: dir, bw: bufio.NewWriterSize(dst, 64<<10)}
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			l.end(false)
			return
		}
		f, size, err := parseLine(dir, line)
		if err != nil {
			l.p.fail(err)
			l.end(true)
			return
		}
		f.Link = l.id
		var payload []byte
		if size >= 0 {
			payload = make([]byte, size+2)
			if _, err := io.ReadFull(br, payload); err != nil {
				l.end(false)
				return
			}
			if payload[size] != '\r' || payload[size+1] != '\n' {
				l.p.fail(fmt.Errorf("natstest: proxy: %s %s: %d-byte payload not followed by CRLF", dir, f.Op, size))
				l.end(true)
				return
			}
			f.split(payload[:size])
		}
		switch {
		case dir == ToClient && f.Op == "INFO":
			line = stripDiscovery(line)
		case dir == ToClient && f.Op == "PONG" && l.popPong():
			continue // the answer to a PING of ours
		case dir == ToServer && f.Op == "PING":
			l.pushPing(nil)
		}
		if !w.frame(f, line, payload) {
			l.end(true)
			return
		}
		if br.Buffered() == 0 && !w.flush() {
			l.end(false)
			return
		}
	}
}
