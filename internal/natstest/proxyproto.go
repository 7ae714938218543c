package natstest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Dir is a direction of a proxied link.
type Dir int

const (
	// ToServer is what the client sends: CONNECT, PUB, HPUB, SUB, PING...
	ToServer Dir = iota + 1
	// ToClient is what the server sends: INFO, MSG, HMSG, PING, +OK...
	ToClient
)

// String returns "to server" or "to client".
func (d Dir) String() string {
	switch d {
	case ToServer:
		return "to server"
	case ToClient:
		return "to client"
	}
	return fmt.Sprintf("Dir(%d)", int(d))
}

// Frame is one protocol operation seen by a Proxy: a control line and,
// for PUB, HPUB, MSG and HMSG, its payload. Header and Data alias the
// proxy's buffer and are valid only while a Hook or Match runs.
type Frame struct {
	Link    int    // the link it travels on: 1 for the first connection through the proxy, 2 for the next...
	Dir     Dir    // its direction
	Op      string // the operation in upper case: "PUB", "HPUB", "MSG", "HMSG", "PING", "SUB", "INFO"...
	Subject string // the subject of PUB, HPUB, MSG, HMSG and SUB; "" for other operations
	Reply   string // the reply subject of a message, if any
	Header  []byte // the header block of HPUB and HMSG (NATS/1.0 ...), nil otherwise
	Data    []byte // the message body
}

// IsMsg reports whether f is a message: PUB or HPUB to the server, MSG or
// HMSG to the client.
func (f *Frame) IsMsg() bool {
	switch f.Op {
	case "PUB", "HPUB", "MSG", "HMSG":
		return true
	}
	return false
}

// HasHeader reports whether f's header block has a line for key (case
// sensitive, as nats.go writes keys).
func (f *Frame) HasHeader(key string) bool {
	return bytes.Contains(f.Header, []byte("\r\n"+key+":"))
}

// parseLine parses one control line (with its CRLF) travelling in dir. It
// returns the frame and the payload's size in bytes, without the CRLF
// that follows it, or -1 for an operation without payload. Only the
// operations a side may send carry payloads: PUB and HPUB from the
// client, MSG and HMSG from the server.
func parseLine(dir Dir, line []byte) (Frame, int, error) {
	fields := bytes.Fields(line)
	if len(fields) == 0 {
		return Frame{Dir: dir}, -1, nil
	}
	f := Frame{Dir: dir, Op: string(bytes.ToUpper(fields[0]))}
	args := fields[1:]
	bad := func() (Frame, int, error) {
		return f, 0, fmt.Errorf("natstest: proxy: malformed %s line %q", f.Op, bytes.TrimSpace(line))
	}
	switch {
	case dir == ToServer && (f.Op == "PUB" || f.Op == "HPUB"),
		dir == ToClient && (f.Op == "MSG" || f.Op == "HMSG"):
		sizes := 1
		if f.Op[0] == 'H' {
			sizes = 2
		}
		fixed := 1 + sizes // subject and sizes
		if dir == ToClient {
			fixed++ // the subscription ID
		}
		if len(args) != fixed && len(args) != fixed+1 {
			return bad()
		}
		f.Subject = string(args[0])
		if len(args) == fixed+1 {
			f.Reply = string(args[len(args)-sizes-1])
		}
		total, err := strconv.Atoi(string(args[len(args)-1]))
		if err != nil || total < 0 {
			return bad()
		}
		if sizes == 2 {
			hdr, err := strconv.Atoi(string(args[len(args)-2]))
			if err != nil || hdr < 0 || hdr > total {
				return bad()
			}
			f.Header = make([]byte, hdr) // a placeholder for the length; split sets it
		}
		return f, total, nil
	case f.Op == "SUB" && len(args) >= 2:
		f.Subject = string(args[0])
	}
	return f, -1, nil
}

// split sets f's Header and Data from the payload (without its CRLF).
func (f *Frame) split(payload []byte) {
	if f.Header != nil {
		n := len(f.Header)
		f.Header, f.Data = payload[:n], payload[n:]
		return
	}
	f.Data = payload
}

// stripDiscovery returns the INFO line without connect_urls and
// ws_connect_urls, so that a client reconnects through the proxy and not
// to the cluster members the server advertises. Other lines, and INFO
// lines without those fields, are returned unchanged.
func stripDiscovery(line []byte) []byte {
	body := bytes.TrimSpace(line[len("INFO"):])
	if !bytes.Contains(body, []byte("connect_urls")) {
		return line
	}
	var info map[string]json.RawMessage
	if err := json.Unmarshal(body, &info); err != nil {
		return line
	}
	delete(info, "connect_urls")
	delete(info, "ws_connect_urls")
	out, err := json.Marshal(info)
	if err != nil {
		return line
	}
	return append(append([]byte("INFO "), out...), '\r', '\n')
}

// subjectMatch reports whether subject matches the NATS subject pattern
// (tokens separated by '.', '*' for one token, '>' for one or more at the
// end). The empty pattern matches every subject.
func subjectMatch(pattern, subject string) bool {
	if pattern == "" {
		return true
	}
	for {
		pt, prest, pmore := cutToken(pattern)
		st, srest, smore := cutToken(subject)
		switch {
		case pt == ">":
			return st != ""
		case st == "" || (pt != "*" && pt != st):
			return false
		case !pmore || !smore:
			return pmore == smore
		}
		pattern, subject = prest, srest
	}
}

func cutToken(s string) (tok, rest string, more bool) {
	return strings.Cut(s, ".")
}
