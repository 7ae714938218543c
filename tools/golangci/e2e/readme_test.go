package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// readmeConfigRE finds the README's .golangci.yml snippet: the YAML block
// that enables the natssend module plugin.
var readmeConfigRE = regexp.MustCompile("(?s)```yaml\n(version: \"2\"\n.*?)```")

// TestREADMEConfig runs the binary with the README's .golangci.yml snippet,
// as a user who copies it would, over examples/unsafe, whose retried raw
// requests are two findings (rawsend and retry) on one line and whose
// findings share messages. golangci-lint must report every natssend finding
// natssend-lint -json reports: with its defaults (issues.uniq-by-line true,
// max-same-issues 3) it would keep one issue per line and three per message.
func TestREADMEConfig(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var config string
	for _, m := range readmeConfigRE.FindAllStringSubmatch(string(readme), -1) {
		if strings.Contains(m[1], "natssend:") {
			config = m[1]
		}
	}
	if config == "" {
		t.Fatal("README.md has no .golangci.yml snippet enabling natssend")
	}
	for _, want := range []string{"uniq-by-line: false", "max-same-issues: 0"} {
		if !strings.Contains(config, want) {
			t.Errorf("the README's snippet lacks %q", want)
		}
	}
	examples := filepath.Join(root, "examples", "unsafe")
	if _, err := os.Stat(examples); errors.Is(err, os.ErrNotExist) {
		t.Skip("no examples/unsafe in this repository")
	}
	path := filepath.Join(t.TempDir(), ".golangci.yml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	modRoot := moduleRoot(t, examples)
	rel, err := filepath.Rel(modRoot, examples)
	if err != nil {
		t.Fatal(err)
	}
	pattern := "./" + filepath.ToSlash(rel) + "/..."
	var ours []issue
	for _, is := range lint(t, modRoot, path, pattern) {
		if is.FromLinter == "natssend" { // the snippet leaves golangci-lint's standard linters on
			ours = append(ours, is)
		}
	}
	got := findings(t, modRoot, ours)
	want := standalone(t, root, modRoot, pattern)
	shared := 0
	for i := 1; i < len(want); i++ {
		if want[i].File == want[i-1].File && want[i].Line == want[i-1].Line {
			shared++
		}
	}
	if shared == 0 {
		t.Fatalf("examples/unsafe has no two findings on one line: the test would not see uniq-by-line\n%s", lines(want))
	}
	if !slices.Equal(got, want) {
		t.Errorf("golangci-lint with the README's snippet:\n%s\nnatssend-lint -json:\n%s", lines(got), lines(want))
	}
}
