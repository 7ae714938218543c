// Command noop is a singlechecker whose analyzer does nothing: the floor of
// loading and type-checking packages, for comparison with natssend-lint.
//
// With NATSSEND_NOOP_FACTS=1 in the environment its analyzer declares a fact
// type, which makes the driver load and type-check every dependency from
// source, as it must for any analyzer with facts (natssend-lint included).
package main

import (
	"os"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/singlechecker"
)

// noFact is the fact type declared with NATSSEND_NOOP_FACTS=1; never exported.
type noFact struct{}

// AFact marks noFact as an analysis.Fact.
func (*noFact) AFact() {}

func main() {
	a := &analysis.Analyzer{
		Name: "noop",
		Doc:  "noop does nothing: the load and type-check floor",
		Run:  func(*analysis.Pass) (any, error) { return nil, nil },
	}
	if os.Getenv("NATSSEND_NOOP_FACTS") == "1" {
		a.FactTypes = []analysis.Fact{new(noFact)}
	}
	singlechecker.Main(a)
}
