package shim_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

func TestHeaderSize(t *testing.T) {
	tests := []struct {
		name string
		h    nats.Header
		want int
	}{
		{"nil", nil, 0},
		{"empty", nats.Header{}, 0},
		{"one", nats.Header{"A": {"b"}}, 12 + len("A: b\r\n")},
		{"key without values", nats.Header{"A": {}}, 12},
		{"multi-value", nats.Header{"A": {"1", "22"}}, 12 + len("A: 1\r\n") + len("A: 22\r\n")},
		{"trimmed", nats.Header{"A": {"  v \t"}}, 12 + len("A: v\r\n")},
		{"inner newline kept as space", nats.Header{"A": {"x\r\ny"}}, 12 + len("A: x  y\r\n")},
		{"trailing newline trimmed", nats.Header{"A": {"x\r\n"}}, 12 + len("A: x\r\n")},
		{"empty value", nats.Header{"A": {""}}, 12 + len("A: \r\n")},
		{"status headers", nats.Header{"Status": {"503"}, "Description": {"No Responders"}},
			12 + len("Status: 503\r\n") + len("Description: No Responders\r\n")},
		{"case kept", nats.Header{"lower": {"v"}, "Lower": {"v"}}, 12 + 2*len("lower: v\r\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := shim.HeaderSize(tt.h); got != tt.want {
				t.Errorf("HeaderSize(%q) = %d, want %d", tt.h, got, tt.want)
			}
			m := &nats.Msg{Subject: "s", Reply: "r", Header: tt.h, Data: []byte("body")}
			if got := shim.MsgSize(m); got != tt.want+4 {
				t.Errorf("MsgSize = %d, want %d", got, tt.want+4)
			}
		})
	}
	if shim.MsgSize(nil) != 0 {
		t.Error("MsgSize(nil) != 0")
	}
}

// wireRecorder wraps the client's TCP connection and records what nats.go
// writes, so tests can read the header length nats.go itself declares in
// HPUB and the bytes it serialized.
type wireRecorder struct {
	mu  sync.Mutex
	out bytes.Buffer
}

func (r *wireRecorder) Dial(network, address string) (net.Conn, error) {
	c, err := net.Dial(network, address)
	if err != nil {
		return nil, err
	}
	return &recConn{Conn: c, r: r}, nil
}

type recConn struct {
	net.Conn
	r *wireRecorder
}

func (c *recConn) Write(p []byte) (int, error) {
	c.r.mu.Lock()
	c.r.out.Write(p)
	c.r.mu.Unlock()
	return c.Conn.Write(p)
}

func (r *wireRecorder) take() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := bytes.Clone(r.out.Bytes())
	r.out.Reset()
	return b
}

// hpubs parses the HPUB frames in wire and returns their header blocks.
func hpubs(t testing.TB, wire []byte) [][]byte {
	t.Helper()
	var blocks [][]byte
	br := bufio.NewReader(bytes.NewReader(wire))
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return blocks
		}
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "HPUB" {
			continue
		}
		hdrLen, _ := strconv.Atoi(f[len(f)-2])
		total, _ := strconv.Atoi(f[len(f)-1])
		payload := make([]byte, total+2)
		if _, err := ioReadFull(br, payload); err != nil {
			t.Fatalf("short HPUB payload: %v", err)
		}
		blocks = append(blocks, payload[:hdrLen])
	}
}

func ioReadFull(br *bufio.Reader, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := br.Read(p[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// FuzzHeaderSize checks HeaderSize against the header block nats.go
// actually writes to a real server.
func FuzzHeaderSize(f *testing.F) {
	f.Add("Key", "value", "K2", " padded\t", "")
	f.Add("A", "", "B", "x\r\ny", "z")
	f.Add("Nats-Msg-Id", "abc", "Status", "503", "Description")
	f.Add("X", "ünï¢ødé", "Y", "\n", "\r")
	s := natstest.Start(f)
	rec := &wireRecorder{}
	nc, err := nats.Connect(s.URL(), nats.SetCustomDialer(rec))
	if err != nil {
		f.Fatal(err)
	}
	defer nc.Close()
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, v3 string) {
		h := nats.Header{}
		for _, kv := range [][2]string{{k1, v1}, {k2, v2}, {k1, v3}} {
			if kv[0] != "" {
				h[kv[0]] = append(h[kv[0]], kv[1])
			}
		}
		if len(h) == 0 {
			return
		}
		rec.take()
		err := nc.PublishMsg(&nats.Msg{Subject: "fuzz", Header: h, Data: []byte("d")})
		if err != nil {
			// nats.go refuses invalid keys; HeaderSize's callers check keys
			// separately, so only valid messages are compared.
			return
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		blocks := hpubs(t, rec.take())
		if len(blocks) != 1 {
			t.Fatalf("want 1 HPUB on the wire, got %d", len(blocks))
		}
		if got, want := shim.HeaderSize(h), len(blocks[0]); got != want {
			t.Fatalf("HeaderSize(%q) = %d, nats.go wrote %d bytes: %q", h, got, want, blocks[0])
		}
	})
}

func ExampleMsgSize() {
	m := &nats.Msg{
		Subject: "orders.created", // subject and reply do not count
		Header:  nats.Header{"Nats-Msg-Id": {"order-42"}},
		Data:    make([]byte, 1000),
	}
	fmt.Println(shim.HeaderSize(m.Header), shim.MsgSize(m))
	// Output: 35 1035
}
