package natstest

import (
	"net"
	"sync"
	"testing"
	"time"
)

// DelayLine is a TCP relay that delivers every byte, in order, a fixed
// time after it arrived, in both directions: a link with a round trip of
// twice the delay and no bandwidth limit of its own. Put it in front of a
// gateway (StartSuperCluster) or any listener.
type DelayLine struct {
	tb     testing.TB
	ln     net.Listener
	target string
	delay  time.Duration

	mu     sync.Mutex
	conns  []net.Conn
	closed bool
	wg     sync.WaitGroup
}

// StartDelayLine listens on a free loopback port and relays each
// connection to target with delay added one way (so 2*delay to a round
// trip). It is closed with tb.Cleanup.
func StartDelayLine(tb testing.TB, target string, delay time.Duration) *DelayLine {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return serveDelayLine(tb, ln, target, delay)
}

// serveDelayLine relays ln's connections to target.
func serveDelayLine(tb testing.TB, ln net.Listener, target string, delay time.Duration) *DelayLine {
	d := &DelayLine{tb: tb, ln: ln, target: target, delay: delay}
	d.wg.Add(1)
	go d.accept()
	tb.Cleanup(d.Close)
	return d
}

// Addr returns the host:port the delay line listens on.
func (d *DelayLine) Addr() string { return d.ln.Addr().String() }

// Delay returns the one-way delay.
func (d *DelayLine) Delay() time.Duration { return d.delay }

// Close stops listening and cuts every relayed connection.
func (d *DelayLine) Close() {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	d.closed = true
	_ = d.ln.Close()
	for _, c := range d.conns {
		_ = c.Close()
	}
	d.mu.Unlock()
	d.wg.Wait()
}

func (d *DelayLine) track(c net.Conn) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		_ = c.Close()
		return false
	}
	d.conns = append(d.conns, c)
	return true
}

func (d *DelayLine) accept() {
	defer d.wg.Done()
	for {
		in, err := d.ln.Accept()
		if err != nil {
			return
		}
		if !d.track(in) {
			return
		}
		out, err := net.Dial("tcp", d.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		if !d.track(out) {
			_ = in.Close()
			return
		}
		d.wg.Add(2)
		go d.relay(in, out)
		go d.relay(out, in)
	}
}

// delayed is a piece of the stream and when it is due.
type delayed struct {
	due  time.Time
	data []byte
}

// relay copies src to dst, each read delivered delay after it was read.
// When either side ends, both are closed.
func (d *DelayLine) relay(src, dst net.Conn) {
	defer d.wg.Done()
	q := make(chan delayed, 4096)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for p := range q {
			if w := time.Until(p.due); w > 0 {
				time.Sleep(w) // the line's delay itself, not a wait for an event
			}
			if _, err := dst.Write(p.data); err != nil {
				break
			}
		}
		_ = src.Close()
		_ = dst.Close()
		for range q { // let the reader finish
		}
	}()
	for {
		buf := make([]byte, 64<<10)
		n, err := src.Read(buf)
		if n > 0 {
			q <- delayed{due: time.Now().Add(d.delay), data: buf[:n]}
		}
		if err != nil {
			break // the peer closed: the other side is closed after what is queued
		}
	}
	close(q)
	<-done
}
