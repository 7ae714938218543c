package natstest

import (
	"strings"
	"testing"
)

func TestParseLine(t *testing.T) {
	for _, c := range []struct {
		dir                Dir
		line               string
		op, subject, reply string
		size, hdr          int
		bad                bool
	}{
		{ToServer, "PUB a.b 5\r\n", "PUB", "a.b", "", 5, -1, false},
		{ToServer, "pub a.b r 5\r\n", "PUB", "a.b", "r", 5, -1, false},
		{ToServer, "HPUB a r 12 20\r\n", "HPUB", "a", "r", 20, 12, false},
		{ToServer, "HPUB a 12 20\r\n", "HPUB", "a", "", 20, 12, false},
		{ToServer, "HPUB a 21 20\r\n", "HPUB", "", "", 0, 0, true},
		{ToServer, "PUB a\r\n", "PUB", "", "", 0, 0, true},
		{ToClient, "MSG a 1 5\r\n", "MSG", "a", "", 5, -1, false},
		{ToClient, "MSG a 1 r 5\r\n", "MSG", "a", "r", 5, -1, false},
		{ToClient, "HMSG _INBOX.x 7 r 12 30\r\n", "HMSG", "_INBOX.x", "r", 30, 12, false},
		{ToClient, "PUB a 5\r\n", "PUB", "", "", -1, -1, false}, // not a server operation: a control line
		{ToServer, "SUB a.> q 3\r\n", "SUB", "a.>", "", -1, -1, false},
		{ToServer, "PING\r\n", "PING", "", "", -1, -1, false},
	} {
		f, size, err := parseLine(c.dir, []byte(c.line))
		if (err != nil) != c.bad {
			t.Fatalf("%q: err %v", c.line, err)
		}
		if c.bad {
			continue
		}
		hdr := -1
		if f.Header != nil {
			hdr = len(f.Header)
		}
		if f.Op != c.op || f.Subject != c.subject || f.Reply != c.reply || size != c.size || hdr != c.hdr {
			t.Fatalf("%q: got %+v size %d hdr %d", c.line, f, size, hdr)
		}
	}
}

func TestSubjectMatch(t *testing.T) {
	for _, c := range []struct {
		p, s string
		ok   bool
	}{
		{"", "a", true}, {"a", "a", true}, {"a", "b", false}, {"a.*", "a.b", true}, {"a.*", "a.b.c", false},
		{"a.>", "a.b.c", true}, {"a.>", "a", false}, {"$O.b.C.>", "$O.b.C.xyz", true}, {"$O.b.C.>", "$O.b.M.xyz", false},
		{"*.b", "a.b", true}, {"a.b", "a.b.c", false}, {"a.b.c", "a.b", false},
	} {
		if got := subjectMatch(c.p, c.s); got != c.ok {
			t.Fatalf("subjectMatch(%q, %q) = %v", c.p, c.s, got)
		}
	}
}

func TestStripDiscovery(t *testing.T) {
	line := `INFO {"server_id":"x","max_payload":1024,"connect_urls":["127.0.0.1:1","127.0.0.1:2"]}` + "\r\n"
	got := string(stripDiscovery([]byte(line)))
	if strings.Contains(got, "connect_urls") || !strings.Contains(got, `"max_payload":1024`) || !strings.HasSuffix(got, "}\r\n") {
		t.Fatalf("got %q", got)
	}
	plain := "INFO {\"a\":1}\r\n"
	if got := string(stripDiscovery([]byte(plain))); got != plain {
		t.Fatalf("changed a line without connect_urls: %q", got)
	}
}
