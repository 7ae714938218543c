package main

import (
	"go/types"

	"golang.org/x/tools/go/analysis"
)

// releasing returns an analyzer that runs a and then drops the package's
// syntax and type information (its files and the maps of its types.Info;
// its types.Package stays, for the packages that import it): the
// in-process run keeps every loaded package until the end, and once a
// package is analyzed nothing reads them again (findings carry positions
// in the shared FileSet, facts hold no syntax). The peak memory is then
// the loaded module, not the loaded module plus the analysis.
func releasing(a *analysis.Analyzer) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:      a.Name,
		Doc:       a.Doc,
		URL:       a.URL,
		Requires:  a.Requires,
		FactTypes: a.FactTypes,
		Run: func(pass *analysis.Pass) (any, error) {
			res, err := a.Run(pass)
			clear(pass.Files)
			*pass.TypesInfo = types.Info{}
			return res, err
		},
	}
}
