package analyzer_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/natssend/natssend/analyzer"
)

// TestDeterministic runs the analyzer several times on packages whose
// facts build on each other and checks that every run exports the same
// facts and reports the same findings in the same order: go vet caches
// facts, and a finding must not depend on the run (the analyzer walks
// maps, whose order changes from run to run).
func TestDeterministic(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.Audit = true
	a := newAnalyzer(t, cfg)
	pkgs := []string{"retryorder", "retryuse", "retrylib", "retry", "indirect", "errpreds", "errflow", "msgids", "realcode", "pace", "wrappers", "retrywrap", "retryhelpers"}
	const runs = 5
	var first string
	for i := 0; i < runs; i++ {
		var blocks []string // one per package, by path
		results := analysistest.Run(&quietT{T: t}, analysistest.TestData(), a, pkgs...)
		slices.SortFunc(results, func(x, y *analysistest.Result) int {
			return strings.Compare(x.Pass.Pkg.Path(), y.Pass.Pkg.Path())
		})
		for _, r := range results {
			var b strings.Builder
			fset := r.Pass.Fset
			var facts []string
			for _, f := range r.Action.AllObjectFacts() {
				if f.Object.Pkg() == r.Pass.Pkg {
					facts = append(facts, fmt.Sprintf("%s: %s: %s", fset.Position(f.Object.Pos()), f.Object.Name(), f.Fact))
				}
			}
			slices.Sort(facts)
			for _, f := range facts {
				fmt.Fprintln(&b, f)
			}
			for _, d := range r.Diagnostics {
				fmt.Fprintf(&b, "%s: %s: %s\n", fset.Position(d.Pos), d.Category, d.Message)
			}
			blocks = append(blocks, b.String())
		}
		got := strings.Join(blocks, "")
		if i == 0 {
			first = got
			if !strings.Contains(first, "retries parameter") {
				t.Fatal("no retry helper facts: the packages do not test what they should")
			}
			continue
		}
		if got != first {
			t.Fatalf("run %d differs from run 1:\n%s\nfirst run:\n%s", i+1, got, first)
		}
	}
}
