package e2e

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// binEnv names an already built binary to test instead of building one.
const binEnv = "NATSSEND_GOLANGCI_LINT"

// categories are the checks the analyzer runs by default.
var categories = []string{"rawsend", "retry", "reconnectbuf"}

// auditCategories are the categories of -audit's entries.
var auditCategories = []string{"reviewed", "unjudged", "delegated"}

// allCategories are every category a diagnostic may carry: the checks, plus
// the receiver check (in force where claim checks are used), the handler
// check, problems and audit entries.
var allCategories = append(append(slices.Clone(categories), "receiver", "handler", "directive"), auditCategories...)

// golangciLint is the path of the binary under test, set by TestMain.
var golangciLint string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if p := os.Getenv(binEnv); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", binEnv, err)
			return 1
		}
		golangciLint = abs
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "natssend-golangci-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	golangciLint = filepath.Join(dir, "golangci-lint")
	cmd := exec.Command("go", "build", "-o", golangciLint, "..")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building golangci-lint: %v\n", err)
		return 1
	}
	return m.Run()
}

// issue is the part of a golangci-lint JSON issue the tests read.
type issue struct {
	FromLinter string
	Text       string
	Pos        struct {
		Filename string
		Line     int
	}
}

// finding is one natssend finding: where and which category.
type finding struct {
	File     string // slash-separated, relative to the run's directory
	Line     int
	Category string
}

func (f finding) String() string { return fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.Category) }

// lint runs golangci-lint run in dir with the configuration file config and
// the package patterns, and returns its issues. Exit code 1 (issues found)
// and 0 are both success; anything else fails the test.
func lint(t *testing.T, dir, config string, patterns ...string) []issue {
	t.Helper()
	stdout, stderr, code := runLint(t, dir, config, patterns...)
	if code != 0 && code != 1 {
		t.Fatalf("golangci-lint exited with %d\nstderr:\n%s", code, stderr)
	}
	var report struct{ Issues []issue }
	if err := json.Unmarshal(stdout, &report); err != nil {
		t.Fatalf("decoding the JSON report: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	if (len(report.Issues) > 0) != (code == 1) {
		t.Errorf("golangci-lint exited with %d and reported %d issues", code, len(report.Issues))
	}
	return report.Issues
}

// runLint runs golangci-lint run and returns its output and exit code.
func runLint(t *testing.T, dir, config string, patterns ...string) (stdout, stderr []byte, code int) {
	t.Helper()
	config, err := filepath.Abs(config)
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{
		"run",
		"--config", config,
		"--output.json.path", "stdout",
		"--show-stats=false",
		"--path-mode", "abs",
	}, patterns...)
	cmd := exec.Command(golangciLint, args...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("running %s: %v", golangciLint, err)
	}
	return out.Bytes(), errOut.Bytes(), code
}

// findings converts natssend issues to findings, reading the category from
// the prefix the plugin gives each message and making file names relative to
// dir. It fails the test for an issue from another linter or without a known
// category prefix.
func findings(t *testing.T, dir string, issues []issue) []finding {
	t.Helper()
	var fs []finding
	for _, is := range issues {
		if is.FromLinter != "natssend" {
			t.Errorf("issue from linter %q, want natssend only: %s", is.FromLinter, is.Text)
			continue
		}
		cat, _, ok := strings.Cut(is.Text, ": ")
		if !ok || !slices.Contains(allCategories, cat) {
			t.Errorf("%s:%d: message does not start with a category (%s): %q",
				is.Pos.Filename, is.Pos.Line, strings.Join(allCategories, ", "), is.Text)
			continue
		}
		fs = append(fs, finding{relPath(t, dir, is.Pos.Filename), is.Pos.Line, cat})
	}
	sortFindings(fs)
	return fs
}

func sortFindings(fs []finding) {
	slices.SortFunc(fs, func(a, b finding) int {
		return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), strings.Compare(a.Category, b.Category))
	})
}

// markerRE matches the "// finding: cat..." comments that mark the expected
// findings of the fixture; auditRE the "// audit: cat" ones that mark the
// entries -audit adds.
var (
	markerRE = regexp.MustCompile(`// finding: ([a-z ]+)$`)
	auditRE  = regexp.MustCompile(`// audit: ([a-z ]+)$`)
)

// expectedFindings reads the "// finding:" markers of the Go files under
// dir, with file names relative to dir.
func expectedFindings(t *testing.T, dir string) []finding {
	t.Helper()
	return expectedMarked(t, dir, markerRE)
}

// expectedMarked reads the markers re matches in the Go files under dir.
func expectedMarked(t *testing.T, dir string, re *regexp.Regexp) []finding {
	t.Helper()
	var want []finding
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		sc := bufio.NewScanner(f)
		for line := 1; sc.Scan(); line++ {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				for _, cat := range strings.Fields(m[1]) {
					want = append(want, finding{filepath.ToSlash(rel), line, cat})
				}
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	sortFindings(want)
	return want
}

// TestFixture runs the binary over a small service written against the real
// nats.go and checks that exactly the marked findings appear, each with its
// category. The fixture's configuration lists its wrap package in
// shim-packages, so the raw send there must not be reported: that checks
// that plugin settings reach the analyzer.
func TestFixture(t *testing.T) {
	dir := filepath.Join("testdata", "unsafe")
	want := expectedFindings(t, dir)
	for _, cat := range categories {
		if !slices.ContainsFunc(want, func(f finding) bool { return f.Category == cat }) {
			t.Fatalf("fixture has no %s finding marked", cat)
		}
	}
	got := findings(t, dir, lint(t, dir, filepath.Join("testdata", "unsafe.golangci.yml"), "./..."))
	if !slices.Equal(got, want) {
		t.Errorf("natssend findings:\n%s\nwant:\n%s", lines(got), lines(want))
	}
}

// TestUnknownSetting checks that a misspelt plugin setting stops
// golangci-lint with an error that names the setting.
func TestUnknownSetting(t *testing.T) {
	dir := filepath.Join("testdata", "unsafe")
	stdout, stderr, code := runLint(t, dir, filepath.Join("testdata", "badsetting.golangci.yml"), "./...")
	if code == 0 || code == 1 {
		t.Fatalf("golangci-lint exited with %d for an unknown setting, want a failure\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if want := `unknown setting "shim-package"`; !bytes.Contains(stderr, []byte(want)) {
		t.Errorf("stderr does not contain %q:\n%s", want, stderr)
	}
}

// TestExamples runs the binary over the repository's examples/unsafe, the
// service written the unsafe way on purpose, with the analyzer defaults.
// Every category must appear, every message must carry its category, and,
// when the standalone natssend-lint is in the repository, the findings must
// be the ones natssend-lint -json reports, category for category.
func TestExamples(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	examples := filepath.Join(root, "examples", "unsafe")
	if _, err := os.Stat(examples); errors.Is(err, os.ErrNotExist) {
		t.Skip("no examples/unsafe in this repository yet")
	}
	modRoot := moduleRoot(t, examples)
	rel, err := filepath.Rel(modRoot, examples)
	if err != nil {
		t.Fatal(err)
	}
	pattern := "./" + filepath.ToSlash(rel) + "/..."
	got := findings(t, modRoot, lint(t, modRoot, filepath.Join("testdata", "examples.golangci.yml"), pattern))
	for _, cat := range categories {
		if !slices.ContainsFunc(got, func(f finding) bool { return f.Category == cat }) {
			t.Errorf("no %s finding in examples/unsafe; findings:\n%s", cat, lines(got))
		}
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "natssend-lint")); err != nil {
		t.Logf("no cmd/natssend-lint to compare with: %v", err)
		return
	}
	want := standalone(t, root, modRoot, pattern)
	t.Logf("%d findings in examples/unsafe:\n%s", len(got), lines(got))
	if !slices.Equal(got, want) {
		t.Errorf("golangci-lint findings:\n%s\nnatssend-lint -json findings:\n%s", lines(got), lines(want))
	}
}

// standalone runs cmd/natssend-lint -json in modRoot, with the analyzer
// defaults changed by flags, and returns its findings, file names relative
// to modRoot.
func standalone(t *testing.T, root, modRoot, pattern string, flags ...string) []finding {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "natssend-lint")
	build := exec.Command("go", "build", "-o", bin, "./cmd/natssend-lint")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building natssend-lint: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, append(append([]string{"-json"}, flags...), pattern)...)
	cmd.Dir = modRoot
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("running natssend-lint: %v", err)
		}
	}
	// -json prints one object per package: {"pkg": {"natssend": [diag...]}},
	// where an entry is either a list of diagnostics or an {"error": ...}.
	var fs []finding
	dec := json.NewDecoder(&out)
	for dec.More() {
		var tree map[string]map[string]json.RawMessage
		if err := dec.Decode(&tree); err != nil {
			t.Fatalf("decoding natssend-lint -json: %v\nstderr:\n%s", err, errOut.String())
		}
		for pkg, byAnalyzer := range tree {
			for name, raw := range byAnalyzer {
				var diags []struct {
					Posn     string `json:"posn"`
					Category string `json:"category"`
				}
				if err := json.Unmarshal(raw, &diags); err != nil {
					t.Fatalf("natssend-lint on %s (%s): %s", pkg, name, raw)
				}
				for _, d := range diags {
					fs = append(fs, posnFinding(t, modRoot, d.Posn, d.Category))
				}
			}
		}
	}
	sortFindings(fs)
	return fs
}

// posnFinding makes a finding of a "file:line:col" position.
func posnFinding(t *testing.T, modRoot, posn, category string) finding {
	t.Helper()
	parts := strings.Split(posn, ":")
	if len(parts) < 3 {
		t.Fatalf("position %q is not file:line:col", posn)
	}
	file := strings.Join(parts[:len(parts)-2], ":")
	var line int
	if _, err := fmt.Sscan(parts[len(parts)-2], &line); err != nil {
		t.Fatalf("position %q: %v", posn, err)
	}
	return finding{relPath(t, modRoot, file), line, category}
}

// relPath returns file relative to dir, slash-separated. A relative file is
// taken as relative to dir already.
func relPath(t *testing.T, dir, file string) string {
	t.Helper()
	if filepath.IsAbs(file) {
		abs, err := filepath.Abs(dir)
		if err != nil {
			t.Fatal(err)
		}
		if file, err = filepath.Rel(abs, file); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.ToSlash(file)
}

// moduleRoot returns the directory of the go.mod that governs dir.
func moduleRoot(t *testing.T, dir string) string {
	t.Helper()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod above %s", dir)
		}
	}
}

func lines(fs []finding) string {
	if len(fs) == 0 {
		return "\t(none)"
	}
	var b strings.Builder
	for i, f := range fs {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("\t" + f.String())
	}
	return b.String()
}
