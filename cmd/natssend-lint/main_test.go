package main_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// stubs are the analyzer's test stubs, reused as local modules so that the
// fixture module builds with no network.
const stubs = "../../analyzer/testdata/src"

// fixture is the module the end-to-end test lints, by file name.
var fixture = map[string]string{
	"go.mod": `module example.com/fixture

go 1.26

require (
	example.com/natslib v0.0.0
	github.com/nats-io/nats.go v1.55.0
	github.com/natssend/natssend v0.0.0
)

replace github.com/nats-io/nats.go => ../natsstub

replace github.com/natssend/natssend => ../natssendstub

replace example.com/natslib => ../natslib
`,
	"wrap/wrap.go": `// Package wrap sends through the shim.
package wrap

import (
	"github.com/nats-io/nats.go"
	"github.com/natssend/natssend/shim"
)

// Notify sends a notification.
func Notify(nc *nats.Conn) error { return shim.Publish(nc, "notify", nil) }
`,
	"app/app.go": `// Package app has one finding of each kind.
package app

import (
	"github.com/nats-io/nats.go"

	"example.com/fixture/wrap"
)

func Run(url string) error {
	nc, err := nats.Connect(url)
	if err != nil {
		return err
	}
	_ = nc.Publish("raw", nil)
	for i := 0; i < 3; i++ {
		if err := wrap.Notify(nc); err == nil {
			break
		}
	}
	//natssend:reviewed liveness probe, 2 bytes
	return nc.Publish("probe", []byte("ok"))
}
`,
	"app/app_test.go": `package app

import (
	"testing"

	"github.com/nats-io/nats.go"
)

func TestRun(t *testing.T) {
	var nc *nats.Conn
	_ = nc.PublishMsg(&nats.Msg{})
}
`,
}

// setup writes the stub modules and the fixture module under a temporary
// directory and returns the fixture's directory.
func setup(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	write := func(name, content string) {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyStub := func(from, to string) {
		b, err := os.ReadFile(filepath.Join(stubs, from))
		if err != nil {
			t.Fatal(err)
		}
		write(to, string(b))
	}
	write("natsstub/go.mod", "module github.com/nats-io/nats.go\n\ngo 1.26\n")
	copyStub("github.com/nats-io/nats.go/nats.go", "natsstub/nats.go")
	copyStub("github.com/nats-io/nats.go/micro/micro.go", "natsstub/micro/micro.go")
	copyStub("github.com/nats-io/nats.go/jetstream/jetstream.go", "natsstub/jetstream/jetstream.go")
	write("natssendstub/go.mod", "module github.com/natssend/natssend\n\ngo 1.26\n\nrequire github.com/nats-io/nats.go v1.55.0\n\nreplace github.com/nats-io/nats.go => ../natsstub\n")
	copyStub("github.com/natssend/natssend/shim/shim.go", "natssendstub/shim/shim.go")
	copyStub("github.com/natssend/natssend/claimcheck/claimcheck.go", "natssendstub/claimcheck/claimcheck.go")
	for name, content := range natslib {
		write(filepath.Join("natslib", name), content)
	}
	for name, content := range fixture {
		write(filepath.Join("fixture", name), content)
	}
	return filepath.Join(root, "fixture")
}

// built is the natssend-lint binary the tests run: built once per test
// binary (each go build -o links anew), removed by TestMain.
var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// buildLint returns natssend-lint built into a temporary directory, once
// for all the tests.
func buildLint(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs natssend-lint and go vet: skipped in -short mode")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "natssend-lint-test")
		if built.err != nil {
			return
		}
		bin := filepath.Join(built.dir, "natssend-lint")
		if out, err := exec.Command(goCmd, "build", "-o", bin, ".").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		built.bin = bin
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// run runs name with args in dir, offline, and returns its exit code,
// stdout and stderr.
// jsonExit is the exit status natssend-lint -json must end with for its
// output: 3 when it reports a finding, 0 when it reports none, as the
// text output does.
func jsonExit(stdout string) int {
	if strings.Contains(stdout, `"posn"`) {
		return 3
	}
	return 0
}

func run(t *testing.T, dir, name string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GO111MODULE=on", "GOTOOLCHAIN=local")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return code, stdout.String(), stderr.String()
}

// Findings expected in the fixture, as patterns over the text output.
var (
	wantRaw     = regexp.MustCompile(`app\.go:15:\d+: raw \(\*nats\.Conn\)\.Publish bypasses exact sizing`)
	wantRetry   = regexp.MustCompile(`app\.go:17:\d+: call of wrap\.Notify \(via shim\.Publish\) is retried on failure`)
	wantConnect = regexp.MustCompile(`app\.go:11:\d+: nats\.Connect without nats\.ReconnectBufSize\(-1\)`)
	wantTest    = regexp.MustCompile(`app_test\.go:11:\d+: raw \(\*nats\.Conn\)\.PublishMsg`)
	wantProbe   = regexp.MustCompile(`app\.go:22:`)
)

func TestStandalone(t *testing.T) {
	t.Parallel()
	bin := buildLint(t)
	dir := setup(t)

	code, _, stderr := run(t, dir, bin, "./...")
	if code != 3 {
		t.Errorf("natssend-lint ./...: exit %d, want 3 (findings)\n%s", code, stderr)
	}
	for _, re := range []*regexp.Regexp{wantRaw, wantRetry, wantConnect, wantTest} {
		if !re.MatchString(stderr) {
			t.Errorf("natssend-lint ./...: no finding matching %s in\n%s", re, stderr)
		}
	}
	if wantProbe.MatchString(stderr) {
		t.Errorf("natssend-lint ./...: the reviewed send was reported:\n%s", stderr)
	}

	code, _, stderr = run(t, dir, bin, "-skip-tests", "-categories=reconnectbuf", "./...")
	if code != 3 || !wantConnect.MatchString(stderr) || wantRaw.MatchString(stderr) || wantRetry.MatchString(stderr) || wantTest.MatchString(stderr) {
		t.Errorf("-skip-tests -categories=reconnectbuf: exit %d, want 3 and only the connect finding:\n%s", code, stderr)
	}

	code, _, stderr = run(t, dir, bin, "-test=false", "./...")
	if code != 3 || wantTest.MatchString(stderr) {
		t.Errorf("-test=false: exit %d, want 3 and no test-file finding:\n%s", code, stderr)
	}

	code, _, stderr = run(t, dir, bin, "-categories=bogus", "./...")
	if code == 0 || code == 3 || !strings.Contains(stderr, `unknown category "bogus"`) {
		t.Errorf("-categories=bogus: exit %d, want a usage error naming the category:\n%s", code, stderr)
	}

	code, _, stderr = run(t, dir, bin, "./wrap")
	if code != 0 || stderr != "" {
		t.Errorf("natssend-lint ./wrap: exit %d, want 0 and no output:\n%s", code, stderr)
	}

	// One exit convention for text and -json (and -vet -json): 3 with
	// findings, 0 without.
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"-json", "./..."}, 3},
		{[]string{"-vet", "-json", "./..."}, 3},
		{[]string{"-json", "./wrap"}, 0},
		{[]string{"-json", "-categories=reconnectbuf", "./wrap"}, 0},
	} {
		code, stdout, stderr := run(t, dir, bin, c.args...)
		if code != c.want || !json.Valid([]byte(stdout)) {
			t.Errorf("natssend-lint %v: exit %d, want %d (as for text), and JSON on stdout:\n%s%s", c.args, code, c.want, stdout, stderr)
		}
	}
}

// jsonDiag is one diagnostic of the -json output.
type jsonDiag struct {
	Category string `json:"category"`
	Posn     string `json:"posn"`
	Message  string `json:"message"`
}

func TestJSONAudit(t *testing.T) {
	t.Parallel()
	bin := buildLint(t)
	dir := setup(t)
	code, stdout, stderr := run(t, dir, bin, "-json", "-audit", "./app")
	if code != jsonExit(stdout) {
		t.Fatalf("-json -audit: exit %d, want %d\n%s", code, jsonExit(stdout), stderr)
	}
	// package -> analyzer -> diagnostics (or an error object).
	var tree map[string]map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &tree); err != nil {
		t.Fatalf("-json output: %v\n%s", err, stdout)
	}
	cats := make(map[string][]string)
	for _, byAnalyzer := range tree {
		var diags []jsonDiag
		if raw, ok := byAnalyzer["natssend"]; ok {
			if err := json.Unmarshal(raw, &diags); err != nil {
				t.Fatalf("natssend entry: %v\n%s", err, raw)
			}
		}
		for _, d := range diags {
			cats[d.Category] = append(cats[d.Category], d.Message)
		}
	}
	for _, c := range []string{"rawsend", "retry", "reconnectbuf", "reviewed"} {
		if len(cats[c]) == 0 {
			t.Errorf("-json -audit: no diagnostic of category %q in %v", c, cats)
		}
	}
	if got := strings.Join(cats["reviewed"], "\n"); !strings.Contains(got, "reviewed raw (*nats.Conn).Publish (rawsend): liveness probe, 2 bytes") {
		t.Errorf("audit entries = %q, want the probe with its reason", got)
	}
}

func TestFix(t *testing.T) {
	t.Parallel()
	bin := buildLint(t)
	dir := setup(t)
	code, _, stderr := run(t, dir, bin, "-fix", "./app")
	// Fixed: the raw Publish and the test's PublishMsg; left: the
	// connection and the retry, listed, so the exit status stays 3.
	if code != 3 {
		t.Fatalf("-fix: exit %d, want 3 (findings without a fix remain)\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "natssend-lint: -fix: fixed 2 findings; 2 findings without a fix remain:\n") ||
		!strings.Contains(stderr, ": nats.Connect without nats.ReconnectBufSize(-1)") ||
		!strings.Contains(stderr, ": call of wrap.Notify (via shim.Publish) is retried on failure") ||
		strings.Contains(stderr, "raw (*nats.Conn).Publish") {
		t.Errorf("-fix: want the summary and the connect and retry findings, not the fixed publish:\n%s", stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "app", "app.go"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	for _, want := range []string{`"github.com/natssend/natssend/shim"`, `_ = shim.Publish(nc, "raw", nil)`, `return nc.Publish("probe"`} {
		if !strings.Contains(src, want) {
			t.Errorf("after -fix, app.go lacks %s:\n%s", want, src)
		}
	}
	if code, _, stderr := run(t, dir, "go", "build", "./..."); code != 0 {
		t.Errorf("go build after -fix: exit %d\n%s", code, stderr)
	}
	// Nothing left to fix: the same summary, nothing fixed.
	code, _, stderr = run(t, dir, bin, "-fix", "./app")
	if code != 3 || !strings.Contains(stderr, "fixed 0 findings; 2 findings without a fix remain:") {
		t.Errorf("-fix again: exit %d, want 3 and nothing fixed\n%s", code, stderr)
	}
	// A package with no findings: silent, exit 0.
	if code, _, stderr := run(t, dir, bin, "-fix", "./wrap"); code != 0 || stderr != "" {
		t.Errorf("-fix ./wrap: exit %d, want 0 and no output\n%s", code, stderr)
	}
}

func TestVetTool(t *testing.T) {
	t.Parallel()
	bin := buildLint(t)
	dir := setup(t)
	code, _, stderr := run(t, dir, "go", "vet", "-vettool="+bin, "./...")
	if code == 0 {
		t.Errorf("go vet -vettool: exit 0, want failure for the findings\n%s", stderr)
	}
	for _, re := range []*regexp.Regexp{wantRaw, wantRetry, wantConnect, wantTest} {
		if !re.MatchString(stderr) {
			t.Errorf("go vet -vettool: no finding matching %s in\n%s", re, stderr)
		}
	}
	if wantProbe.MatchString(stderr) {
		t.Errorf("go vet -vettool: the reviewed send was reported:\n%s", stderr)
	}

	code, _, stderr = run(t, dir, "go", "vet", "-vettool="+bin, "-categories=retry", "./...")
	if code == 0 || !wantRetry.MatchString(stderr) || wantRaw.MatchString(stderr) {
		t.Errorf("go vet -vettool -categories=retry: exit %d, want only the retry finding\n%s", code, stderr)
	}

	code, _, stderr = run(t, dir, "go", "vet", "-vettool="+bin, "./wrap")
	if code != 0 {
		t.Errorf("go vet -vettool ./wrap: exit %d, want 0\n%s", code, stderr)
	}
}
