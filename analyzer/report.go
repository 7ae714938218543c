package analyzer

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/token"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// addRetry records a retry finding at call.
func (st *state) addRetry(call *ast.CallExpr, api, msg string) {
	st.findings = append(st.findings, &finding{
		category: CategoryRetry,
		pos:      call.Pos(),
		end:      call.End(),
		api:      api,
		message:  msg,
		report:   true,
	})
}

// finding is a candidate diagnostic. Findings that would not be reported
// under the current configuration (exempt package, disabled category) are
// kept so that a directive on them is not called unused.
type finding struct {
	category string
	pos, end token.Pos
	api      string // the send or connect API, for audit entries
	message  string
	report   bool
	fix      func() []analysis.SuggestedFix
}

// skipFile reports whether nothing may be reported in the file.
func (st *state) skipFile(tf *token.File) bool {
	return tf == nil || (st.set.skipTest && st.tests[tf])
}

// report matches findings with directives and reports what remains.
func (st *state) report() {
	slices.SortStableFunc(st.findings, func(a, b *finding) int {
		return cmp.Or(cmp.Compare(a.pos, b.pos), strings.Compare(a.category, b.category))
	})
	type auditEntry struct {
		pos, end token.Pos
		api      string
		cats     []string
		reason   string
	}
	var audit []*auditEntry
	seen := make(map[string]bool)
	for _, f := range st.findings {
		key := fmt.Sprintf("%d/%s", f.pos, f.category)
		if seen[key] {
			continue
		}
		seen[key] = true
		tf := st.pass.Fset.File(f.pos)
		if st.skipFile(tf) {
			continue
		}
		var applied *directive
		uncovered := false // a directive applies but does not cover this retry
		if fd := st.dirs[tf]; fd != nil {
			sp := stmtSpan(fd.file, tf, f.pos)
			for _, d := range fd.list {
				if !d.applies(sp) {
					continue
				}
				switch {
				case d.malformed != "":
					d.near = d.near || f.report
				case d.covers(f.category):
					d.used = true
					if applied == nil {
						applied = d
					}
				case f.report:
					d.retryOnly = true
					uncovered = true
				}
			}
		}
		if !f.report {
			continue
		}
		if applied != nil {
			applied.suppressed = true
			if n := len(audit); n > 0 && audit[n-1].pos == f.pos {
				audit[n-1].cats = append(audit[n-1].cats, f.category)
			} else {
				audit = append(audit, &auditEntry{f.pos, f.end, f.api, []string{f.category}, applied.reason})
			}
			continue
		}
		msg := f.message
		if uncovered {
			msg += " (a directive needs \"" + retryPrefix + " <reason>\")"
		}
		d := analysis.Diagnostic{Pos: f.pos, End: f.end, Category: f.category, Message: msg, URL: categoryURL(f.category)}
		if f.fix != nil {
			d.SuggestedFixes = f.fix()
		}
		st.pass.Report(d)
	}
	if st.set.audit {
		for _, a := range audit {
			reason := a.reason
			if reason == "" {
				reason = "(no reason given)"
			}
			st.pass.Report(analysis.Diagnostic{
				Pos:      a.pos,
				End:      a.end,
				Category: CategoryReviewed,
				URL:      categoryURL(CategoryReviewed),
				Message:  fmt.Sprintf("reviewed %s (%s): %s", a.api, strings.Join(a.cats, ", "), reason),
			})
		}
	}
	for tf, fd := range st.sortedDirs() {
		if st.skipFile(tf) {
			continue
		}
		for _, d := range fd.list {
			var msg string
			switch {
			case d.malformed != "":
				if d.spaced && !d.near {
					continue // perhaps prose quoting the directive
				}
				msg = d.malformed
			case !d.used && d.retryOnly:
				msg = "unused " + directivePrefix + " directive: it does not cover the retry reported on this statement; review a retry with " + directivePrefix + " " + retryPrefix + " <reason>"
			case !d.used:
				msg = "unused " + directivePrefix + " directive: no NATS send, retry or connect is reported on this statement; remove it"
			case d.reason == "":
				msg = directivePrefix + " needs a reason: say why this send is safe, e.g. " + directivePrefix + " reply is a fixed 2-byte ack"
			default:
				continue
			}
			st.pass.Report(analysis.Diagnostic{Pos: d.pos, End: d.end, Category: CategoryDirective, Message: msg, URL: categoryURL(CategoryDirective)})
		}
	}
}

// sortedDirs iterates over the files with directives in position order.
func (st *state) sortedDirs() func(yield func(*token.File, *fileDirectives) bool) {
	return func(yield func(*token.File, *fileDirectives) bool) {
		tfs := make([]*token.File, 0, len(st.dirs))
		for tf := range st.dirs {
			tfs = append(tfs, tf)
		}
		slices.SortFunc(tfs, func(a, b *token.File) int { return cmp.Compare(a.Base(), b.Base()) })
		for _, tf := range tfs {
			if !yield(tf, st.dirs[tf]) {
				return
			}
		}
	}
}
