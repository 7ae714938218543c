package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestVetProtocol(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"-V=full"}, true},
		{[]string{"-flags"}, true},
		{[]string{"-json", "-categories=retry", "/tmp/go-build1/b001/vet.cfg"}, true},
		{[]string{"-categories", "retry", "/tmp/go-build1/b001/vet.cfg"}, true},
		{[]string{"help"}, false}, // drive answers help
		{[]string{"-audit", "help", "natssend"}, false},
		{[]string{"./..."}, false},
		{[]string{"-json", "./cmd/..."}, false},
		{[]string{"-retry-helpers=example.com/flags.Do", "./..."}, false},
		{[]string{"./...", "-V"}, false}, // after the patterns: a package name
		{nil, false},
	} {
		if got := vetProtocol(c.args); got != c.want {
			t.Errorf("vetProtocol(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

// A finding in a file shared by two packages (a package and its test
// variant, as an in-process checker reports them) is kept once, in the
// package that sorts first; -test=false drops findings in test files.
func TestResultsDedup(t *testing.T) {
	stream := `{"a": {"natssend": [
	{"posn": "/m/a/a.go:3:2", "end": "/m/a/a.go:3:9", "message": "raw send", "category": "rawsend"},
	{"posn": "/m/a/a_test.go:5:2", "end": "/m/a/a_test.go:5:9", "message": "raw send", "category": "rawsend"}]}}
{"a [a.test]": {"natssend": [
	{"posn": "/m/a/a.go:3:2", "end": "/m/a/a.go:3:9", "message": "raw send", "category": "rawsend"},
	{"posn": "/m/a/a.go:3:2", "end": "/m/a/a.go:3:9", "message": "retried", "category": "retry"}]}}
{"b": {"natssend": {"error": "boom"}}}
`
	tree, err := readTree(strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	res, err := tree.results(true, map[string]string{urlKey("/m/a/a.go:3:2", "retried"): "https://example.com/retried"})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	res.printText(&text, -1, false)
	// The first finding of each category links to its section; a URL the
	// analyzer set (here an invented one) wins over the derived one.
	want := "/m/a/a.go:3:2: raw send\n\trawsend: " + checksURL + "rawsend\n" +
		"/m/a/a.go:3:2: retried\n\tretry: https://example.com/retried\n" +
		"/m/a/a_test.go:5:2: raw send\n"
	if text.String() != want {
		t.Errorf("text =\n%s\nwant\n%s", text.String(), want)
	}
	if len(res.errors) != 1 || !strings.Contains(res.errors[0], "boom") {
		t.Errorf("errors = %q, want the analyzer error of b", res.errors)
	}
	var js bytes.Buffer
	if err := res.printJSON(&js); err != nil {
		t.Fatal(err)
	}
	var out map[string]map[string]json.RawMessage
	if err := json.Unmarshal(js.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	var a, at []map[string]string
	_ = json.Unmarshal(out["a"]["natssend"], &a)
	_ = json.Unmarshal(out["a [a.test]"]["natssend"], &at)
	if len(a) != 2 || len(at) != 1 || at[0]["message"] != "retried" {
		t.Errorf("-json: a has %d, a [a.test] has %v; want 2 and only the retry\n%s", len(a), at, js.String())
	} else if a[0]["url"] != checksURL+"rawsend" || a[1]["url"] != checksURL+"rawsend" || at[0]["url"] != "https://example.com/retried" {
		t.Errorf("-json: urls %q, %q, %q", a[0]["url"], a[1]["url"], at[0]["url"])
	}

	res, err = tree.results(false, nil)
	if err != nil {
		t.Fatal(err)
	}
	text.Reset()
	res.printText(&text, -1, false)
	if strings.Contains(text.String(), "_test.go") || len(res.diags) != 2 {
		t.Errorf("-test=false: got\n%s", text.String())
	}
}

func TestWithURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"posn":"a.go:1:2","message":"m"}`, `{"posn":"a.go:1:2","message":"m","url":"u"}`},
		{"{}\n", `{"url":"u"}`},
		{`[1]`, `[1]`},
	} {
		if got := string(withURL(json.RawMessage(c.in), "u")); got != c.want {
			t.Errorf("withURL(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestParsePosition(t *testing.T) {
	p := parsePosition("/a:b/c.go:12:3")
	if p.file != "/a:b/c.go" || p.line != 12 || p.col != 3 {
		t.Errorf("parsePosition = %+v", p)
	}
	if p := parsePosition("-"); p.file != "" {
		t.Errorf("parsePosition(-) = %+v, want zero", p)
	}
}

func TestHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := drive([]string{"-h"}, &stdout, &stderr); code != exitOK {
		t.Errorf("-h: exit %d, want 0", code)
	}
	if s := stderr.String(); strings.Contains(s, "\ngoroutine ") || strings.HasPrefix(s, "panic: ") || strings.Contains(s, "\npanic: ") || !strings.Contains(s, "-vet") || !strings.Contains(s, "-categories") {
		t.Errorf("-h output:\n%s", s)
	}
	stderr.Reset()
	if code := drive([]string{"-categories=bogus", "./..."}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), `unknown category "bogus"`) {
		t.Errorf("-categories=bogus: exit %d\n%s", code, stderr.String())
	}
	stderr.Reset()
	if code := drive([]string{"-diff", "./..."}, &stdout, &stderr); code != exitUsage {
		t.Errorf("-diff without -fix: exit %d, want %d\n%s", code, exitUsage, stderr.String())
	}
}
