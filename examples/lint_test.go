package examples_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/natssend/natssend/analyzer"
)

// findings runs the natssend analyzer with its default configuration over
// the packages matching pattern and returns "file:line category" for each
// diagnostic, sorted.
func findings(t *testing.T, pattern string) []string {
	t.Helper()
	cfg := &packages.Config{Mode: packages.LoadAllSyntax, Tests: true}
	pkgs, err := packages.Load(cfg, pattern)
	if err != nil {
		t.Fatal(err)
	}
	if packages.PrintErrors(pkgs) > 0 {
		t.Fatal("packages did not load")
	}
	graph, err := checker.Analyze([]*analysis.Analyzer{analyzer.Analyzer}, pkgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	seen := map[string]bool{}
	for act := range graph.All() {
		if !act.IsRoot {
			continue
		}
		for _, d := range act.Diagnostics {
			pos := act.Package.Fset.Position(d.Pos)
			f := fmt.Sprintf("%s:%d %s", filepath.Base(pos.Filename), pos.Line, d.Category)
			// A package and its test variant report the same finding.
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestUnsafeExampleFindings pins the exact set of findings on the service
// written the unsafe way: each raw send, the two retried sends and the
// connection that keeps the reconnect buffer.
func TestUnsafeExampleFindings(t *testing.T) {
	want := []string{
		"orders.go:101 rawsend",     // js.Publish (jetstream) without a claim check
		"orders.go:101 retry",       // ... retried in for {} without a message ID
		"orders.go:37 reconnectbuf", // nats.Connect with the default reconnect buffer
		"orders.go:47 rawsend",      // nc.Publish
		"orders.go:59 rawsend",      // nc.RequestWithContext
		"orders.go:59 retry",        // ... in a counted loop that continues on error
		"orders.go:80 rawsend",      // m.Respond (error reply)
		"orders.go:85 rawsend",      // m.Respond (error reply)
		"orders.go:89 rawsend",      // m.Respond (result)
	}
	slices.Sort(want)
	got := findings(t, "github.com/natssend/natssend/examples/unsafe")
	if !slices.Equal(got, want) {
		t.Fatalf("findings on examples/unsafe:\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
}

// TestSafeExampleIsClean: the same service on the shim has no findings.
func TestSafeExampleIsClean(t *testing.T) {
	if got := findings(t, "github.com/natssend/natssend/examples/safe"); len(got) != 0 {
		t.Fatalf("findings on examples/safe: %v", got)
	}
}
