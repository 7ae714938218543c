package main_test

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// natslib is an organisation's shared NATS library: another module, whose
// exported Emit sends through a helper in a second package of its own.
var natslib = map[string]string{
	"go.mod": `module example.com/natslib

go 1.26

require github.com/nats-io/nats.go v1.55.0

replace github.com/nats-io/nats.go => ../natsstub
`,
	"natslib.go": `// Package natslib is the organisation's shared NATS helpers.
package natslib

import (
	"github.com/nats-io/nats.go"

	"example.com/natslib/wire"
)

// Emit publishes an event.
func Emit(nc *nats.Conn, subject string, body []byte) error {
	return wire.Send(nc, subject, body)
}
`,
	"wire/wire.go": `// Package wire puts messages on the wire.
package wire

import "github.com/nats-io/nats.go"

// Send publishes body on subject.
func Send(nc *nats.Conn, subject string, body []byte) error {
	return nc.Publish(subject, body)
}
`,
}

func init() {
	fixture["cross/cross.go"] = `// Package cross retries a send of the shared library, another module.
package cross

import (
	"time"

	"github.com/nats-io/nats.go"

	"example.com/natslib"
)

// Announce publishes until the library reports success.
func Announce(nc *nats.Conn, body []byte) error {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if err = natslib.Emit(nc, "events", body); err == nil {
			return nil
		}
		time.Sleep(time.Duration(attempt) * 100 * time.Millisecond)
	}
	return err
}
`
	fixture["app/x_test.go"] = `package app_test

import (
	"testing"

	"example.com/fixture/app"
)

func TestRunFails(t *testing.T) {
	if app.Run("nats://127.0.0.1:1") == nil {
		t.Skip("a server is listening")
	}
}
`
}

var wantCross = regexp.MustCompile(`cross\.go:16:\d+: call of natslib\.Emit \(via \(\*nats\.Conn\)\.Publish\) is retried on failure`)

// TestWrapperInOtherModule: a wrapper that sends, declared two packages
// deep in another module, makes its retry a finding, standalone and under
// go vet.
func TestWrapperInOtherModule(t *testing.T) {
	t.Parallel()
	bin := buildLint(t)
	dir := setup(t)
	code, _, stderr := run(t, dir, bin, "./cross")
	if code != 3 || !wantCross.MatchString(stderr) {
		t.Errorf("natssend-lint ./cross: exit %d, want 3 and a finding matching %s:\n%s", code, wantCross, stderr)
	}
	code, _, stderr = run(t, dir, "go", "vet", "-vettool="+bin, "./cross")
	if code == 0 || !wantCross.MatchString(stderr) {
		t.Errorf("go vet -vettool ./cross: exit %d, want a finding matching %s:\n%s", code, wantCross, stderr)
	}
}

// finding is a diagnostic as a comparable value, the position relative to
// the fixture directory.
type finding struct{ Posn, Category, Message string }

// vetFindings decodes go vet -json output (one tree per vetted package)
// or natssend-lint -json output (one tree).
func vetFindings(t *testing.T, dir, out string) []finding {
	t.Helper()
	var all []finding
	dec := json.NewDecoder(strings.NewReader(out))
	for {
		var tree map[string]map[string]json.RawMessage
		if err := dec.Decode(&tree); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decoding JSON: %v\n%s", err, out)
		}
		for _, byAnalyzer := range tree {
			var diags []jsonDiag
			if err := json.Unmarshal(byAnalyzer["natssend"], &diags); err != nil {
				t.Fatalf("natssend entry: %v\n%s", err, byAnalyzer["natssend"])
			}
			for _, d := range diags {
				all = append(all, finding{strings.TrimPrefix(d.Posn, dir+string(filepath.Separator)), d.Category, d.Message})
			}
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Posn+all[i].Message < all[j].Posn+all[j].Message })
	return all
}

// textFindings returns the diagnostic lines of text output, the positions
// relative to dir, sorted; natssend-lint's documentation links (which go
// vet does not print) are left out.
func textFindings(dir, out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if l == "" || strings.HasPrefix(l, "#") || docLink.MatchString(l) {
			continue
		}
		lines = append(lines, strings.TrimPrefix(l, dir+string(filepath.Separator)))
	}
	sort.Strings(lines)
	return lines
}

// docLink is a documentation link line of the text output.
var docLink = regexp.MustCompile(`^\t[a-z]+: https://\S+#[a-z]+$`)

// TestSameAsVet: standalone (in this process, or through go vet with
// -vet) and go vet -vettool report the same findings on the same packages,
// as JSON and as text, with the analyzer's flags too;
// and no finding is reported twice although vet checks the packages with
// their tests (a non-test file belongs to the package and its test
// variant).
func TestSameAsVet(t *testing.T) {
	t.Parallel()
	bin := buildLint(t)
	dir := setup(t)
	for _, flags := range [][]string{nil, {"-audit"}, {"-categories=retry,rawsend", "-skip-tests"}} {
		args := append(slices.Clone(flags), "./...")
		code, stdout, stderr := run(t, dir, bin, append([]string{"-json"}, args...)...)
		if code != jsonExit(stdout) {
			t.Fatalf("natssend-lint -json %v: exit %d\n%s", args, code, stderr)
		}
		standalone := vetFindings(t, dir, stdout)
		code, stdout, stderr = run(t, dir, "go", append([]string{"vet", "-vettool=" + bin, "-json"}, args...)...)
		if code != 0 {
			t.Fatalf("go vet -json %v: exit %d\n%s", args, code, stderr)
		}
		vet := vetFindings(t, dir, stdout)
		if len(standalone) == 0 || !slices.Equal(standalone, vet) {
			t.Errorf("%v: natssend-lint -json and go vet -vettool -json differ:\nstandalone %v\ngo vet     %v", flags, standalone, vet)
		}
		code, stdout, stderr = run(t, dir, bin, append([]string{"-vet", "-json"}, args...)...)
		if code != jsonExit(stdout) {
			t.Fatalf("natssend-lint -vet -json %v: exit %d\n%s", args, code, stderr)
		}
		if viaVet := vetFindings(t, dir, stdout); !slices.Equal(standalone, viaVet) {
			t.Errorf("%v: natssend-lint -json and natssend-lint -vet -json differ:\nstandalone %v\n-vet       %v", flags, standalone, viaVet)
		}
		seen := make(map[finding]bool)
		for _, f := range standalone {
			if seen[f] {
				t.Errorf("%v: reported twice in -json: %v", flags, f)
			}
			seen[f] = true
		}

		_, _, lintText := run(t, dir, bin, args...)
		_, _, viaVetText := run(t, dir, bin, append([]string{"-vet"}, args...)...)
		if lt, vt := textFindings(dir, lintText), textFindings(dir, viaVetText); !slices.Equal(lt, vt) {
			t.Errorf("%v: text output differs with -vet:\nstandalone %q\n-vet       %q", flags, lt, vt)
		}
		_, _, vetText := run(t, dir, "go", append([]string{"vet", "-vettool=" + bin}, args...)...)
		lt, vt := textFindings(dir, lintText), textFindings(dir, vetText)
		if len(lt) != len(standalone) || !slices.Equal(lt, vt) {
			t.Errorf("%v: text output differs from go vet's or from -json (%d findings):\nstandalone %q\ngo vet     %q", flags, len(standalone), lt, vt)
		}
	}
	_, _, stderr := run(t, dir, bin, "./...")
	if n := len(wantRaw.FindAllString(stderr, -1)); n != 1 {
		t.Errorf("the raw publish in app.go (a package with internal and external tests) is reported %d times, want once:\n%s", n, stderr)
	}
}

// TestNoTestFiles: -test=false reports nothing in test files, as text or
// JSON, and with -fix leaves them alone.
func TestNoTestFiles(t *testing.T) {
	t.Parallel()
	bin := buildLint(t)
	dir := setup(t)
	code, stdout, stderr := run(t, dir, bin, "-test=false", "-json", "./...")
	if code != jsonExit(stdout) {
		t.Fatalf("-test=false -json: exit %d\n%s", code, stderr)
	}
	got := vetFindings(t, dir, stdout)
	if len(got) == 0 {
		t.Fatal("-test=false -json: no findings at all")
	}
	for _, f := range got {
		if strings.Contains(f.Posn, "_test.go:") {
			t.Errorf("-test=false -json reported a test file: %v", f)
		}
	}
	test := filepath.Join(dir, "app", "app_test.go")
	before, err := os.ReadFile(test)
	if err != nil {
		t.Fatal(err)
	}
	// The connection and the retry have no fix and remain: exit 3.
	if code, _, stderr := run(t, dir, bin, "-test=false", "-fix", "./app"); code != 3 || !strings.Contains(stderr, "fixed 1 finding; 2 findings without a fix remain:") {
		t.Fatalf("-test=false -fix: exit %d, want 3 and one fix\n%s", code, stderr)
	}
	after, err := os.ReadFile(test)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Errorf("-test=false -fix changed app_test.go:\n%s", after)
	}
	src, err := os.ReadFile(filepath.Join(dir, "app", "app.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), `shim.Publish(nc, "raw", nil)`) {
		t.Errorf("-test=false -fix did not fix app.go:\n%s", src)
	}
}

// TestEditedFile: after an edit, the cached results of the edited package
// are not reused.
func TestEditedFile(t *testing.T) {
	t.Parallel()
	bin := buildLint(t)
	dir := setup(t)
	if code, _, stderr := run(t, dir, bin, "./app"); code != 3 || !wantRaw.MatchString(stderr) {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	name := filepath.Join(dir, "app", "app.go")
	src, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(src), `_ = nc.Publish("raw", nil)`, `//natssend:reviewed heartbeat, empty body
	_ = nc.Publish("raw", nil)`, 1)
	if err := os.WriteFile(name, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, dir, bin, "./app")
	if code != 3 || strings.Contains(stderr, "app.go:15:") || !wantConnect.MatchString(stderr) {
		t.Errorf("after marking the raw publish reviewed: exit %d, want 3 without it:\n%s", code, stderr)
	}
}

// TestErrors: a package that does not type-check is an error (exit 1)
// with the type error shown; so is a pattern matching no package.
func TestErrors(t *testing.T) {
	t.Parallel()
	bin := buildLint(t)
	dir := setup(t)
	broken := filepath.Join(dir, "broken", "broken.go")
	if err := os.MkdirAll(filepath.Dir(broken), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(broken, []byte("package broken\n\nvar X int = \"not an int\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, dir, bin, "./broken")
	if code != 1 || !strings.Contains(stderr, "broken.go:3") {
		t.Errorf("natssend-lint ./broken: exit %d, want 1 and the type error:\n%s", code, stderr)
	}
	code, _, stderr = run(t, dir, bin, "./nosuchdir")
	if code != 1 || stderr == "" {
		t.Errorf("natssend-lint ./nosuchdir: exit %d, want 1 and a message:\n%s", code, stderr)
	}
	code, _, stderr = run(t, dir, bin)
	if code != 2 || !strings.Contains(stderr, "Usage") {
		t.Errorf("natssend-lint with no packages: exit %d, want 2 and the usage:\n%s", code, stderr)
	}
}
