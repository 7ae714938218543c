package connlimit

import (
	"bytes"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"sync"
)

// maxInfoLine bounds how much of the connection's first line is held back
// while it is looked for. A larger first line (a cluster with very many
// connect URLs) is passed through unchanged and the connection counts as
// unguarded.
const maxInfoLine = 1 << 20

// infoConn is a net.Conn whose first INFO line, the one nats.go parses
// synchronously during the handshake, announces a placeholder max_payload
// (see Dialer.placeholder): 0 on a connection's first link, a small value
// no higher than any limit the connection had before on later links.
// Nothing else is changed: the rest of that line is the server's JSON
// with the same fields and values, and every byte after the line is
// passed through as it is read.
//
// With the placeholder, nats.go's own size check (made under its
// connection lock, atomically with the write) refuses every message above
// it with nats.ErrMaxPayload until the server's next INFO is parsed: the
// one the server sends right after its first PONG, which carries the
// connection's account- and user-adjusted limit. So nats.go does not hold
// a limit higher than the one the server enforces on this connection
// (see the package documentation for the one exception).
type infoConn struct {
	net.Conn
	d *Dialer

	mu      sync.Mutex // guards the fields below (Read is not called concurrently, but be safe)
	done    bool       // first line handled; pass everything through
	buf     []byte     // bytes read while looking for the end of the first line
	pending []byte     // bytes to hand out before reading again
}

// Read implements net.Conn.
func (c *infoConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	if c.done && len(c.pending) == 0 {
		// After the first line: a plain pass-through, without the lock
		// held during a blocking read.
		c.mu.Unlock()
		return c.Conn.Read(p)
	}
	defer c.mu.Unlock()
	for !c.done && len(c.pending) == 0 {
		if err := c.fill(); err != nil {
			if len(c.pending) == 0 {
				return 0, err
			}
			break
		}
	}
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		if len(c.pending) == 0 {
			c.pending = nil
		}
		return n, nil
	}
	return c.Conn.Read(p)
}

// fill reads once from the connection and, when the first line is
// complete (or cannot be an INFO line), decides what to hand out.
func (c *infoConn) fill() error {
	var tmp [4096]byte
	n, err := c.Conn.Read(tmp[:])
	c.buf = append(c.buf, tmp[:n]...)
	if !maybeInfo(c.buf) {
		c.finish(c.buf, result{kind: notInfo})
		return err
	}
	if i := bytes.IndexByte(c.buf, '\n'); i >= 0 {
		line, rest := c.buf[:i+1], c.buf[i+1:]
		out, res := rewriteInfo(line, c.d.placeholder)
		c.finish(append(out, rest...), res)
		return err
	}
	if len(c.buf) > maxInfoLine {
		c.finish(c.buf, result{kind: notInfo})
		return err
	}
	if err != nil {
		// The connection ended inside the first line: hand out what came.
		c.finish(c.buf, result{kind: notInfo})
	}
	return err
}

func (c *infoConn) finish(out []byte, res result) {
	c.done = true
	c.buf = nil
	c.pending = out
	c.d.record(res)
}

// maybeInfo reports whether b can still be the start of "INFO " (nats.go
// accepts the operation in upper case only).
func maybeInfo(b []byte) bool {
	const op = "INFO "
	n := min(len(b), len(op))
	return string(b[:n]) == op[:n]
}

// resultKind says what happened to a connection's first line.
type resultKind int

const (
	notInfo   resultKind = iota // not an INFO line (TLS first, websocket, garbage): passed through
	oldServer                   // an INFO from a server that sends no INFO after the first PONG: passed through
	badInfo                     // an INFO whose JSON nats.go cannot parse either: passed through
	rewritten                   // max_payload announced as 0 until the server's next INFO
)

// result describes a connection's first line.
type result struct {
	kind        resultKind
	serverMax   int64  // the server-wide max_payload the line announced
	placeholder int64  // what the rewritten line announces instead
	version     string // the server's version
}

// A server sends the connection's own limit in an INFO right after the
// first PONG (nats-server's processPing: ConnectInfo, with max_payload
// from the connection, for every client of protocol 1, which nats.go
// always announces). Older servers sent an INFO after the first PONG only
// when the server's INFO had changed, and with the server-wide
// max_payload; for them the first INFO is passed through unchanged. The
// behaviour was verified in the v2.15.2 sources and is relied on from
// v2.10.0 on, the oldest release line still supported upstream; a server
// that nevertheless sends no such INFO leaves the limit at 0, which fails
// safe (State.Limit then reports ErrNoLimit instead of sending).
const (
	minAsyncInfoProto = 1
	minMajor          = 2
	minMinor          = 10
)

// sendsConnectInfo reports whether a server of this version sends the
// connection's limit after the first PONG.
func sendsConnectInfo(version string) bool {
	major, rest, _ := strings.Cut(version, ".")
	minor, _, _ := strings.Cut(rest, ".")
	ma, ok1 := leadingInt(major)
	mi, ok2 := leadingInt(minor)
	if !ok1 || !ok2 {
		return false
	}
	return ma > minMajor || (ma == minMajor && mi >= minMinor)
}

// leadingInt parses the decimal digits at the start of s ("11-rc1" is 11).
func leadingInt(s string) (int, bool) {
	i := 0
	for i < len(s) && i < 6 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.Atoi(s[:i])
	return n, err == nil
}

// rewriteInfo returns line with max_payload set to place(the announced
// value), when line is an INFO line from a server that announces the
// connection's own limit in a later INFO. Otherwise it returns line
// unchanged. Every other field keeps its name and its value (the object's
// fields may come out in another order, which JSON does not give a
// meaning to, and strings re-escaped).
func rewriteInfo(line []byte, place func(serverMax int64) int64) ([]byte, result) {
	body, ok := infoJSON(line)
	if !ok {
		return line, result{kind: notInfo}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return line, result{kind: badInfo}
	}
	res := result{kind: rewritten}
	if raw, ok := fields["max_payload"]; ok {
		if n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64); err == nil {
			res.serverMax = n
		}
	}
	if raw, ok := fields["version"]; ok {
		_ = json.Unmarshal(raw, &res.version)
	}
	proto := 0
	if raw, ok := fields["proto"]; ok {
		_ = json.Unmarshal(raw, &proto)
	}
	if proto < minAsyncInfoProto || !sendsConnectInfo(res.version) {
		res.kind = oldServer
		return line, res
	}
	res.placeholder = place(res.serverMax)
	fields["max_payload"] = json.RawMessage(strconv.FormatInt(res.placeholder, 10))
	out, err := json.Marshal(fields)
	if err != nil {
		return line, result{kind: badInfo}
	}
	b := make([]byte, 0, len(out)+len("INFO \r\n"))
	b = append(b, "INFO "...)
	b = append(b, out...)
	b = append(b, "\r\n"...)
	return b, res
}

// infoJSON returns the JSON argument of an INFO line, the way nats.go's
// parseControl splits it (operation, one space, the rest trimmed).
func infoJSON(line []byte) ([]byte, bool) {
	s := bytes.TrimRight(line, "\r\n")
	op, args, ok := bytes.Cut(s, []byte(" "))
	if !ok || string(bytes.TrimSpace(op)) != "INFO" {
		return nil, false
	}
	return bytes.TrimSpace(args), true
}
