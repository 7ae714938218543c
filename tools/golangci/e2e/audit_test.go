package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAuditEntries checks that the plugin shows -audit's entries
// (reviewed, unjudged, delegated) only when its audit setting asks for
// them, as natssend-lint shows them only with -audit, and then exactly
// where natssend-lint -audit does, each message starting with its
// category once ("unjudged: nats.Connect: ...").
func TestAuditEntries(t *testing.T) {
	dir := filepath.Join("testdata", "unsafe")
	findingsOnly := expectedFindings(t, dir)
	entries := expectedMarked(t, dir, auditRE)
	for _, cat := range auditCategories {
		if !slices.ContainsFunc(entries, func(f finding) bool { return f.Category == cat }) {
			t.Fatalf("fixture has no %s entry marked", cat)
		}
	}
	want := append(slices.Clone(findingsOnly), entries...)
	sortFindings(want)
	issues := lint(t, dir, filepath.Join("testdata", "audit.golangci.yml"), "./...")
	got := findings(t, dir, issues)
	if !slices.Equal(got, want) {
		t.Errorf("natssend issues with audit: true:\n%s\nwant:\n%s", lines(got), lines(want))
	}
	for _, is := range issues {
		cat, rest, _ := strings.Cut(is.Text, ": ")
		if strings.HasPrefix(rest, cat+" ") {
			t.Errorf("%s:%d: the category is repeated: %q", is.Pos.Filename, is.Pos.Line, is.Text)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "natssend-lint")); err != nil {
		t.Logf("no cmd/natssend-lint to compare with: %v", err)
		return
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if sa := standalone(t, root, abs, "./...", "-audit", "-shim-packages=example.com/unsafe/wrap"); !slices.Equal(got, sa) {
		t.Errorf("golangci-lint with audit: true:\n%s\nnatssend-lint -audit -json:\n%s", lines(got), lines(sa))
	}
}
