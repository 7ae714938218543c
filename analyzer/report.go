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

// reporter collects the findings of a pass and reports them: it knows the
// package's files (which are tests, their source, their natssend
// directives) and the findings recorded so far. The checks add findings
// (add, addRetry); report matches them with the directives and
// reports what remains, once, at the end of the pass.
type reporter struct {
	pass     *analysis.Pass
	set      *settings
	exempt   bool // the package is a shim package: raw sends and connects are its job
	files    map[*token.File]*ast.File
	tests    map[*token.File]bool
	contents map[*token.File][]byte
	dirs     map[*token.File]*fileDirectives
	findings []*finding
}

// newReporter returns the reporter of pass, with the directives of its
// files parsed.
func newReporter(pass *analysis.Pass, set *settings) *reporter {
	r := &reporter{
		pass:     pass,
		set:      set,
		exempt:   set.exempt(pass.Pkg.Path()),
		files:    make(map[*token.File]*ast.File, len(pass.Files)),
		tests:    make(map[*token.File]bool, len(pass.Files)),
		contents: make(map[*token.File][]byte),
		dirs:     make(map[*token.File]*fileDirectives),
	}
	for _, f := range pass.Files {
		tf := pass.Fset.File(f.FileStart)
		if tf == nil {
			continue
		}
		r.files[tf] = f
		r.tests[tf] = strings.HasSuffix(tf.Name(), "_test.go")
		if fd := parseDirectives(f, tf, r.tests[tf], func() []byte { return r.content(tf) }); fd != nil {
			r.dirs[tf] = fd
		}
	}
	return r
}

// reported reports whether findings of the category are reported in this
// package: the category is enabled and the package is not exempt.
func (r *reporter) reported(category string) bool {
	return r.set.enabled[category] && !r.exempt
}

// add records a finding.
func (r *reporter) add(f *finding) {
	r.findings = append(r.findings, f)
}

// content returns the source of the file, or nil if it cannot be read.
func (r *reporter) content(tf *token.File) []byte {
	if b, ok := r.contents[tf]; ok {
		return b
	}
	b, err := r.pass.ReadFile(tf.Name())
	if err != nil {
		b = nil
	}
	r.contents[tf] = b
	return b
}

// source returns the source text of n, or "" if it is not available.
func (r *reporter) source(n ast.Node) string {
	tf := r.pass.Fset.File(n.Pos())
	if tf == nil {
		return ""
	}
	b := r.content(tf)
	start, end := tf.Offset(n.Pos()), tf.Offset(n.End())
	if b == nil || start < 0 || end > len(b) || start > end {
		return ""
	}
	return string(b[start:end])
}

// addRetry records a retry finding at call.
func (r *reporter) addRetry(call *ast.CallExpr, api, msg string) {
	r.add(&finding{
		category: CategoryRetry,
		pos:      call.Pos(),
		end:      call.End(),
		api:      api,
		message:  msg,
		report:   true,
	})
}

// reviewedRetry reports whether a retry directive covers the statement
// of call, and then keeps a finding there that is not reported, so that
// the directive, reviewing a retry reported elsewhere (ifaceretry.go), is
// not called unused.
func (r *reporter) reviewedRetry(call *ast.CallExpr) bool {
	tf := r.pass.Fset.File(call.Pos())
	fd := r.dirs[tf]
	if fd == nil {
		return false
	}
	sp := stmtSpan(fd.file, tf, call.Pos())
	for _, d := range fd.list {
		if d.malformed == "" && d.applies(sp) && d.covers(CategoryRetry) {
			r.add(&finding{category: CategoryRetry, pos: call.Pos(), end: call.End()})
			return true
		}
	}
	return false
}

// unjudged lists, with -audit, a connect whose options the analyzer
// cannot judge, and why.
func (r *reporter) unjudged(call *ast.CallExpr, why string) {
	r.auditConnect(call, CategoryUnjudged, why)
}

// delegated lists, with -audit, a connect judged at the calls of the
// exported function whose callers give its options, and which.
func (r *reporter) delegated(call *ast.CallExpr, why string) {
	r.auditConnect(call, CategoryDelegated, why)
}

// auditConnect reports the audit entry "category why" at the connect
// call, with -audit and the reconnectbuf check on.
func (r *reporter) auditConnect(call *ast.CallExpr, category, why string) {
	if !r.reported(CategoryReconnectBuf) {
		return
	}
	r.auditEntry(call, category, why)
}

// auditEntry reports, with -audit, the entry "category why" at call:
// an unjudged or delegated connect, or a receive path the receiver check
// cannot follow (unjudged).
func (r *reporter) auditEntry(call *ast.CallExpr, category, why string) {
	if !r.set.audit || r.skipFile(r.pass.Fset.File(call.Pos())) {
		return
	}
	r.pass.Report(analysis.Diagnostic{
		Pos:      call.Pos(),
		End:      call.End(),
		Category: category,
		URL:      categoryURL(category),
		Message:  category + " " + why,
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
func (r *reporter) skipFile(tf *token.File) bool {
	return tf == nil || (r.set.skipTest && r.tests[tf])
}

// report matches findings with directives and reports what remains.
func (r *reporter) report() {
	slices.SortStableFunc(r.findings, func(a, b *finding) int {
		return cmp.Or(r.comparePos(a.pos, b.pos), strings.Compare(a.category, b.category))
	})
	type auditEntry struct {
		pos, end token.Pos
		api      string
		cats     []string
		reason   string
	}
	var audit []*auditEntry
	seen := make(map[string]bool)
	for _, f := range r.findings {
		key := fmt.Sprintf("%d/%s", f.pos, f.category)
		if seen[key] {
			continue
		}
		seen[key] = true
		tf := r.pass.Fset.File(f.pos)
		if r.skipFile(tf) {
			continue
		}
		var applied *directive
		uncovered := false // a directive applies but does not cover this retry
		if fd := r.dirs[tf]; fd != nil {
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
		r.pass.Report(d)
	}
	if r.set.audit {
		for _, a := range audit {
			reason := a.reason
			if reason == "" {
				reason = "(no reason given)"
			}
			r.pass.Report(analysis.Diagnostic{
				Pos:      a.pos,
				End:      a.end,
				Category: CategoryReviewed,
				URL:      categoryURL(CategoryReviewed),
				Message:  fmt.Sprintf("reviewed %s (%s): %s", a.api, strings.Join(a.cats, ", "), reason),
			})
		}
	}
	for tf, fd := range r.sortedDirs() {
		if r.skipFile(tf) {
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
			r.pass.Report(analysis.Diagnostic{Pos: d.pos, End: d.end, Category: CategoryDirective, Message: msg, URL: categoryURL(CategoryDirective)})
		}
	}
}

// comparePos orders positions by file name, then offset: the findings
// come out in the same order whatever order the driver added the files to
// the file set in (go/packages parses them in parallel).
func (r *reporter) comparePos(a, b token.Pos) int {
	if a == b {
		return 0
	}
	fa, fb := r.pass.Fset.File(a), r.pass.Fset.File(b)
	if fa == nil || fb == nil || fa == fb {
		return cmp.Compare(a, b)
	}
	return cmp.Or(cmp.Compare(fa.Name(), fb.Name()), cmp.Compare(fa.Offset(a), fb.Offset(b)))
}

// sortedDirs iterates over the files with directives in file name order.
func (r *reporter) sortedDirs() func(yield func(*token.File, *fileDirectives) bool) {
	return func(yield func(*token.File, *fileDirectives) bool) {
		tfs := make([]*token.File, 0, len(r.dirs))
		for tf := range r.dirs {
			tfs = append(tfs, tf)
		}
		slices.SortFunc(tfs, func(a, b *token.File) int { return cmp.Compare(a.Name(), b.Name()) })
		for _, tf := range tfs {
			if !yield(tf, r.dirs[tf]) {
				return
			}
		}
	}
}
