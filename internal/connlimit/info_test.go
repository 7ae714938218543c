package connlimit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
)

// chunkConn is a net.Conn whose reads return the scripted chunks one by
// one, as a network splits a byte stream.
type chunkConn struct {
	net.Conn // nil: only Read is used
	chunks   [][]byte
}

func (c *chunkConn) Read(p []byte) (int, error) {
	for len(c.chunks) > 0 && len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	c.chunks[0] = c.chunks[0][n:]
	return n, nil
}

// split cuts b at random points.
func split(r *rand.Rand, b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n := 1 + r.IntN(len(b))
		if r.IntN(3) == 0 {
			n = 1 + r.IntN(min(len(b), 8))
		}
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

// through reads everything from an infoConn over the chunks of in.
func through(t *testing.T, r *rand.Rand, in []byte) ([]byte, *Dialer) {
	t.Helper()
	d := &Dialer{}
	d.kind.Store(-1)
	c := &infoConn{Conn: &chunkConn{chunks: split(r, in)}, d: d}
	var out bytes.Buffer
	buf := make([]byte, 1+r.IntN(64))
	for {
		n, err := c.Read(buf)
		out.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes(), d
}

// randomInfo returns a server INFO JSON object with random extra fields,
// values that contain the text "max_payload", and the given version.
func randomInfo(r *rand.Rand, version string, maxPayload int64) map[string]any {
	m := map[string]any{
		"server_id":   fmt.Sprintf("N%08d", r.IntN(1e8)),
		"server_name": "max_payload\":99,\"x",
		"version":     version,
		"proto":       1,
		"go":          "go1.26",
		"host":        "127.0.0.1",
		"port":        4222,
		"headers":     true,
		"max_payload": maxPayload,
		"client_id":   r.IntN(1 << 20),
		"client_ip":   "127.0.0.1",
		"nonce":       strings.Repeat("ab", r.IntN(20)),
	}
	for i := range r.IntN(6) {
		m[fmt.Sprintf("extra_%d", i)] = []any{r.IntN(100), "s\r", map[string]any{"max_payload": r.IntN(100)}}
	}
	if r.IntN(3) == 0 {
		urls := make([]string, r.IntN(50))
		for i := range urls {
			urls[i] = fmt.Sprintf("10.0.%d.%d:4222", i/250, i%250)
		}
		m["connect_urls"] = urls
	}
	return m
}

// TestInfoRewriteProperty: the first INFO announces max_payload 0, every
// other field keeps its value, and every byte after the first line comes
// out exactly as it went in, however the stream is split across reads.
func TestInfoRewriteProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		maxPayload := int64(1 + r.IntN(64<<20))
		info := randomInfo(r, "2.15.2", maxPayload)
		js, _ := json.Marshal(info)
		first := append(append([]byte("INFO "), js...), "\r\n"...)
		// What follows: protocol lines, among them later INFOs, which
		// must not be touched.
		rest := []byte("PONG\r\nINFO {\"max_payload\":1024,\"proto\":1}\r\nMSG a 1 3\r\nabc\r\n")
		rest = append(rest, bytes.Repeat([]byte{byte(i)}, r.IntN(100))...)
		out, d := through(t, r, append(append([]byte(nil), first...), rest...))
		line, after, ok := bytes.Cut(out, []byte("\n"))
		if !ok {
			t.Fatalf("case %d: no line in output %q", i, out)
		}
		if !bytes.Equal(after, rest) {
			t.Fatalf("case %d: bytes after the first INFO changed:\n got %q\nwant %q", i, after, rest)
		}
		body, ok := infoJSON(append(line, '\n'))
		if !ok {
			t.Fatalf("case %d: output line %q is not INFO", i, line)
		}
		var got, want map[string]any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		_ = json.Unmarshal(js, &want)
		if got["max_payload"] != float64(0) {
			t.Fatalf("case %d: max_payload = %v, want 0", i, got["max_payload"])
		}
		delete(got, "max_payload")
		delete(want, "max_payload")
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if !bytes.Equal(g, w) {
			t.Fatalf("case %d: fields changed:\n got %s\nwant %s", i, g, w)
		}
		if !d.guarded() || d.serverMax.Load() != maxPayload {
			t.Fatalf("case %d: guarded %v, server max %d (want %d)", i, d.guarded(), d.serverMax.Load(), maxPayload)
		}
	}
}

// TestInfoPassThrough: streams whose first line is not an INFO nats.go
// would parse, or comes from a server too old to announce the connection's
// limit later, come out unchanged and leave the connection unguarded.
func TestInfoPassThrough(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	old, _ := json.Marshal(randomInfo(r, "2.9.25", 1<<20))
	proto0, _ := json.Marshal(map[string]any{"version": "2.15.2", "proto": 0, "max_payload": 1 << 20})
	cases := map[string][]byte{
		"tls first":   {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03},
		"websocket":   []byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n"),
		"old server":  append(append([]byte("INFO "), old...), "\r\nPONG\r\n"...),
		"proto 0":     append(append([]byte("INFO "), proto0...), "\r\n"...),
		"bad json":    []byte("INFO {\"max_payload\":\r\nPING\r\n"),
		"lower case":  []byte("info {\"max_payload\":5}\r\n"),
		"no line end": []byte("INFO {\"max_payload\":5,\"proto\":1,\"version\":\"2.15.2\"}"),
		"empty":       nil,
	}
	for name, in := range cases {
		for range 50 {
			out, d := through(t, r, append([]byte(nil), in...))
			if !bytes.Equal(out, in) {
				t.Fatalf("%s: changed:\n got %q\nwant %q", name, out, in)
			}
			if d.guarded() {
				t.Fatalf("%s: counted as guarded", name)
			}
		}
	}
}

func TestSendsConnectInfo(t *testing.T) {
	for v, want := range map[string]bool{
		"2.15.2": true, "2.10.0": true, "2.11.0-RC.1": true, "3.0.0": true,
		"2.9.25": false, "1.4.1": false, "": false, "x.y": false, "2": false,
	} {
		if got := sendsConnectInfo(v); got != want {
			t.Errorf("sendsConnectInfo(%q) = %v, want %v", v, got, want)
		}
	}
}

// FuzzInfoRewrite: whatever the server sends and however it is split, the
// bytes after the first line are never changed, and a rewritten first
// line keeps every field but max_payload.
func FuzzInfoRewrite(f *testing.F) {
	js, _ := json.Marshal(randomInfo(rand.New(rand.NewPCG(5, 6)), "2.15.2", 65536))
	f.Add(append(append([]byte("INFO "), js...), "\r\nPONG\r\n"...), uint64(1))
	f.Add([]byte("INFO {}\r\n"), uint64(2))
	f.Add([]byte("INFO {\"proto\":1,\"version\":\"2.12.0\",\"max_payload\":\"x\"}\r\nrest"), uint64(3))
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		r := rand.New(rand.NewPCG(seed, seed))
		out, d := through(t, r, append([]byte(nil), in...))
		i := bytes.IndexByte(in, '\n')
		if !d.guarded() {
			if !bytes.Equal(out, in) {
				t.Fatalf("unguarded stream changed:\n got %q\nwant %q", out, in)
			}
			return
		}
		j := bytes.IndexByte(out, '\n')
		if i < 0 || j < 0 || !bytes.Equal(out[j+1:], in[i+1:]) {
			t.Fatalf("bytes after the first line changed:\n got %q\nwant %q", out, in)
		}
		inBody, _ := infoJSON(in[:i+1])
		outBody, ok := infoJSON(out[:j+1])
		if !ok {
			t.Fatalf("rewritten line %q is not INFO", out[:j+1])
		}
		var a, b map[string]json.RawMessage
		if err := json.Unmarshal(inBody, &a); err != nil {
			t.Fatalf("guarded, but the input does not parse: %v", err)
		}
		if err := json.Unmarshal(outBody, &b); err != nil {
			t.Fatalf("rewritten line does not parse: %v", err)
		}
		if string(b["max_payload"]) != "0" {
			t.Fatalf("max_payload = %s", b["max_payload"])
		}
		delete(a, "max_payload")
		delete(b, "max_payload")
		if len(a) != len(b) {
			t.Fatalf("fields: %d in, %d out", len(a), len(b))
		}
		for k, v := range a {
			var x, y any
			_ = json.Unmarshal(v, &x)
			_ = json.Unmarshal(b[k], &y)
			if fmt.Sprint(x) != fmt.Sprint(y) {
				t.Fatalf("field %q: %s became %s", k, v, b[k])
			}
		}
	})
}

// TestPlaceholder: a Dialer that has confirmed a limit announces the least
// of that limit, PlaceholderFloor and the server-wide value on its next
// link; before any confirmed limit it announces 0.
func TestPlaceholder(t *testing.T) {
	d := &Dialer{}
	info := func(serverMax int64) []byte {
		js, _ := json.Marshal(map[string]any{"version": "2.15.2", "proto": 1, "max_payload": serverMax})
		return append(append([]byte("INFO "), js...), "\r\n"...)
	}
	announced := func(serverMax int64) float64 {
		out, _ := rewriteInfo(info(serverMax), d.placeholder)
		body, _ := infoJSON(out)
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		return m["max_payload"].(float64)
	}
	if got := announced(1 << 20); got != 0 {
		t.Fatalf("before any confirmed limit: %v, want 0", got)
	}
	for _, c := range []struct {
		observe, serverMax int64
		want               float64
	}{
		{observe: 64 << 10, serverMax: 1 << 20, want: PlaceholderFloor},
		{observe: 1000, serverMax: 1 << 20, want: 1000},
		{observe: 64 << 10, serverMax: 500, want: 500},
		{observe: 2000, serverMax: 1 << 20, want: 1000}, // the floor only falls
	} {
		d.observe(c.observe)
		if got := announced(c.serverMax); got != c.want {
			t.Fatalf("after observing %d, server max %d: %v, want %v", c.observe, c.serverMax, got, c.want)
		}
	}
}
