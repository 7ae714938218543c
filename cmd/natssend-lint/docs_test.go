package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const checksURL = "https://github.com/natssend/natssend/blob/main/docs/checks.md#"

// urlDiag is a diagnostic of the -json output with its link.
type urlDiag struct {
	Category string `json:"category"`
	Posn     string `json:"posn"`
	Message  string `json:"message"`
	URL      string `json:"url"`
}

// jsonDiags decodes natssend-lint -json output.
func jsonDiags(t *testing.T, out string) []urlDiag {
	t.Helper()
	var tree map[string]map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &tree); err != nil {
		t.Fatalf("-json output: %v\n%s", err, out)
	}
	var all []urlDiag
	for _, byAnalyzer := range tree {
		var diags []urlDiag
		if err := json.Unmarshal(byAnalyzer["natssend"], &diags); err != nil {
			t.Fatalf("natssend entry: %v", err)
		}
		all = append(all, diags...)
	}
	slices.SortFunc(all, func(a, b urlDiag) int { return strings.Compare(a.Posn+a.Message, b.Posn+b.Message) })
	return all
}

// TestURLs: every finding of -json carries the analyzer's Diagnostic.URL
// (its category's section of docs/checks.md), in process, where the
// driver reads it from the diagnostics, and with -vet, where go vet's JSON
// has lost it and the driver derives it from the category.
func TestURLs(t *testing.T) {
	t.Parallel()
	bin := buildLint(t)
	dir := setup(t)
	code, stdout, stderr := run(t, dir, bin, "-json", "-audit", "./...")
	if code != jsonExit(stdout) {
		t.Fatalf("-json: exit %d\n%s", code, stderr)
	}
	here := jsonDiags(t, stdout)
	code, stdout, stderr = run(t, dir, bin, "-vet", "-json", "-audit", "./...")
	if code != jsonExit(stdout) {
		t.Fatalf("-vet -json: exit %d\n%s", code, stderr)
	}
	viaVet := jsonDiags(t, stdout)
	if len(here) < 4 || !slices.Equal(here, viaVet) {
		t.Errorf("-json and -vet -json differ:\n%v\n%v", here, viaVet)
	}
	for _, d := range here {
		if d.URL != checksURL+d.Category {
			t.Errorf("%s: url %q, want %q", d.Posn, d.URL, checksURL+d.Category)
		}
	}
	// Text: each category's link once, after its first finding; with -url
	// after every finding.
	_, _, text := run(t, dir, bin, "-audit", "./...")
	_, _, every := run(t, dir, bin, "-audit", "-url", "./...")
	for _, c := range []string{"rawsend", "retry", "reconnectbuf", "reviewed"} {
		line := "\n\t" + c + ": " + checksURL + c + "\n"
		if n := strings.Count(text, line); n != 1 {
			t.Errorf("text output links %s %d times, want once:\n%s", c, n, text)
		}
		if n, want := strings.Count(every, line), countCategory(here, c); n != want {
			t.Errorf("-url links %s %d times, want %d:\n%s", c, n, want, every)
		}
	}
}

func countCategory(diags []urlDiag, c string) int {
	n := 0
	for _, d := range diags {
		if d.Category == c {
			n++
		}
	}
	return n
}

// TestHelpCommand: natssend-lint help, as docs/checks.md says, prints the
// usage and the categories' links on stdout and exits 0; help with a
// category prints its link; an unknown one is a usage error.
func TestHelpCommand(t *testing.T) {
	t.Parallel()
	bin := buildLint(t)
	dir := t.TempDir()
	code, stdout, stderr := run(t, dir, bin, "help")
	if code != 0 || !strings.Contains(stdout, "Usage: natssend-lint") || !strings.Contains(stdout, "-categories") ||
		!strings.Contains(stdout, "  retry         "+checksURL+"retry\n") {
		t.Errorf("help: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, _ = run(t, dir, bin, "help", "reconnectbuf")
	if code != 0 || strings.TrimSpace(stdout) != "reconnectbuf  "+checksURL+"reconnectbuf" {
		t.Errorf("help reconnectbuf: exit %d, %q", code, stdout)
	}
	code, _, stderr = run(t, dir, bin, "help", "bogus")
	if code != 2 || !strings.Contains(stderr, `unknown category "bogus"`) {
		t.Errorf("help bogus: exit %d, %q", code, stderr)
	}
	code, _, stderr = run(t, dir, bin, "-help")
	if code != 0 || !strings.Contains(stderr, "Usage: natssend-lint") {
		t.Errorf("-help: exit %d, %q", code, stderr)
	}
}

// TestUnsafeExample runs the README's first command, natssend-lint over
// examples/unsafe from the repository root: exit status 3, exactly the
// findings listed in examples/unsafe/findings.txt, and a link per
// category.
func TestUnsafeExample(t *testing.T) {
	t.Parallel()
	bin := buildLint(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	want := readFindings(t, filepath.Join(root, "examples", "unsafe", "findings.txt"))
	code, _, text := run(t, root, bin, "./examples/unsafe/...")
	if code != 3 {
		t.Fatalf("natssend-lint ./examples/unsafe/...: exit %d, want 3\n%s", code, text)
	}
	code, stdout, stderr := run(t, root, bin, "-json", "./examples/unsafe/...")
	if code != jsonExit(stdout) {
		t.Fatalf("-json: exit %d\n%s", code, stderr)
	}
	var got []string
	cats := map[string]bool{}
	for _, d := range jsonDiags(t, stdout) {
		file, line, _ := strings.Cut(strings.TrimPrefix(d.Posn, filepath.Join(root, "examples", "unsafe")+string(filepath.Separator)), ":")
		line, _, _ = strings.Cut(line, ":")
		got = append(got, fmt.Sprintf("%s:%s %s", file, line, d.Category))
		cats[d.Category] = true
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("findings on examples/unsafe:\n got %q\nwant %q", got, want)
	}
	for c := range cats {
		if !strings.Contains(text, "\n\t"+c+": "+checksURL+c+"\n") {
			t.Errorf("no %s link in the text output:\n%s", c, text)
		}
	}
}

// readFindings reads an expected-findings file: one "file:line category"
// per line, # comments, sorted.
func readFindings(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}
