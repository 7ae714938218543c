package analyzer

import (
	"fmt"
	"go/parser"
	"go/token"
	"strings"
)

// mustExtractDoc returns the section "# Analyzer name" of the package doc
// comment in the sources srcs (doc.go, then doc_rest.go, which go doc
// joins in that order; a continuation's first paragraph, "Package
// analyzer, continued ...", which revive asks for, is left out), in the
// form Analyzer.Doc expects: the summary after "name: ", a blank line, and
// the text up to the next section of the analyzer's own (a following "# "
// heading that does not belong to it is kept: the analyzer's documentation
// is the rest of the comment). It panics if the section is missing, as
// x/tools analyzers do.
func mustExtractDoc(name string, srcs ...string) string {
	var text string
	for i, src := range srcs {
		f, err := parser.ParseFile(token.NewFileSet(), "doc.go", src, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil || f.Doc == nil {
			panic(fmt.Sprintf("natssend: doc source %d has no package comment: %v", i, err))
		}
		part := f.Doc.Text()
		if i > 0 {
			if _, after, ok := strings.Cut(part, "\n\n"); ok && strings.HasPrefix(part, "Package ") {
				part = after
			}
			text += "\n"
		}
		text += part
	}
	head := "# Analyzer " + name + "\n"
	i := strings.Index(text, head)
	if i < 0 {
		panic("natssend: doc.go has no " + strings.TrimSpace(head) + " section")
	}
	body := strings.TrimLeft(text[i+len(head):], "\n")
	summary, rest, _ := strings.Cut(body, "\n")
	summary, ok := strings.CutPrefix(summary, name+": ")
	if !ok {
		panic("natssend: the " + strings.TrimSpace(head) + " section does not start with \"" + name + ": \"")
	}
	return summary + "\n" + rest
}
