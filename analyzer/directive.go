package analyzer

import (
	"go/ast"
	"go/token"
	"strings"

	"golang.org/x/tools/go/ast/astutil"
)

// directivePrefix is the review directive. It is written like other Go
// directives: no space after "//".
const directivePrefix = "//natssend:reviewed"

// retryPrefix starts the reason of a directive that reviews a retry.
const retryPrefix = "retry:"

// directive is one //natssend:reviewed comment.
type directive struct {
	pos, end   token.Pos
	line       int    // line of the comment
	target     int    // standalone: first line after it that is not a comment; trailing: 0
	reason     string // text after the directive name (and after "retry:"), trimmed
	retry      bool   // the reason starts with "retry:": it covers retries too
	malformed  string // non-empty: why the comment is not a valid directive
	spaced     bool   // malformed as "// natssend:reviewed": reported only next to a finding
	near       bool   // spaced, and on a statement with a reported finding
	test       bool   // in a _test.go file
	used       bool   // attached to at least one candidate finding it covers
	retryOnly  bool   // not used, but on a statement with a retry it does not cover
	suppressed bool   // suppressed at least one finding that would be reported
}

// covers reports whether the directive suppresses a finding of category
// cat: a retry only with a reason starting with "retry:", everything else
// always.
func (d *directive) covers(cat string) bool {
	return cat != CategoryRetry || d.retry
}

// fileDirectives holds the directives of one file.
type fileDirectives struct {
	file *ast.File
	tf   *token.File
	list []*directive
}

// parseDirectives finds the review directives in file. content is the file's
// source, used to tell a directive on its own line from a trailing one; it
// is read only for files that contain a directive.
func parseDirectives(file *ast.File, tf *token.File, test bool, read func() []byte) *fileDirectives {
	var fd *fileDirectives
	var content []byte
	for _, cg := range file.Comments {
		for _, c := range cg.List {
			malformed, spaced, ok := classifyComment(c.Text)
			if !ok {
				continue
			}
			if fd == nil {
				fd = &fileDirectives{file: file, tf: tf}
				content = read()
			}
			d := &directive{
				pos:       c.Pos(),
				end:       c.End(),
				line:      tf.Line(c.Pos()),
				malformed: malformed,
				spaced:    spaced,
				test:      test,
			}
			if malformed == "" {
				d.reason = directiveReason(c.Text)
				if rest, ok := strings.CutPrefix(d.reason, retryPrefix); ok {
					d.retry = true
					d.reason = strings.TrimSpace(rest)
				}
			}
			if standalone(content, tf, c.Pos()) {
				d.target = nextCodeLine(file, tf, content, tf.Line(c.End()))
			}
			fd.list = append(fd.list, d)
		}
	}
	return fd
}

// directiveReason returns the reason of a valid directive comment: the text
// after the directive name, up to a further " //" that starts an ordinary
// comment.
func directiveReason(text string) string {
	reason := strings.TrimPrefix(text, directivePrefix)
	if i := strings.Index(reason, " //"); i >= 0 {
		reason = reason[:i]
	}
	return strings.TrimSpace(reason)
}

// classifyComment reports whether the comment text is, or looks like, a
// natssend directive, and if so why it is malformed ("" when it is valid).
// spaced marks "// natssend:reviewed", which may be prose (a doc comment
// quoting the directive): it is reported only on a statement with a
// finding.
func classifyComment(text string) (malformed string, spaced, ok bool) {
	if rest, found := strings.CutPrefix(text, directivePrefix); found {
		if rest == "" || rest[0] == ' ' || rest[0] == '\t' {
			return "", false, true
		}
		return "unknown directive " + strings.Fields(text)[0] + ": the review directive is " + directivePrefix + " <reason>", false, true
	}
	if rest, found := strings.CutPrefix(text, "//natssend:"); found {
		name := rest
		if f := strings.Fields(rest); len(f) > 0 {
			name = f[0]
		}
		return "unknown directive //natssend:" + name + ": the review directive is " + directivePrefix + " <reason>", false, true
	}
	if body, found := strings.CutPrefix(text, "//"); found {
		trimmed := strings.TrimLeft(body, " \t")
		if trimmed != body && strings.HasPrefix(trimmed, "natssend:reviewed") {
			return "malformed directive: write " + directivePrefix + " with no space after //, or it is an ordinary comment and suppresses nothing", true, true
		}
	}
	return "", false, false
}

// standalone reports whether only white space precedes pos on its line.
func standalone(content []byte, tf *token.File, pos token.Pos) bool {
	off := tf.Offset(pos)
	start := tf.Offset(tf.LineStart(tf.Line(pos)))
	if content == nil || off > len(content) || start > off {
		return true
	}
	return strings.TrimLeft(string(content[start:off]), " \t") == ""
}

// nextCodeLine returns the first line after line that does not consist of a
// comment alone, so that a directive may head a block of comments.
func nextCodeLine(file *ast.File, tf *token.File, content []byte, line int) int {
	commentOnly := make(map[int]bool)
	for _, cg := range file.Comments {
		for _, c := range cg.List {
			if standalone(content, tf, c.Pos()) {
				for l := tf.Line(c.Pos()); l <= tf.Line(c.End()); l++ {
					commentOnly[l] = true
				}
			}
		}
	}
	next := line + 1
	for commentOnly[next] {
		next++
	}
	return next
}

// span is the lines of the statement a finding belongs to: the directive on
// any of these lines (or standalone on the line above) applies to it. Lines
// inside the body of a function literal nested in the statement belong to
// the literal's own statements and are excluded.
type span struct {
	start, end int
	holes      [][2]int // excluded line ranges, inclusive
}

func (s span) contains(line int) bool {
	if line < s.start || line > s.end {
		return false
	}
	for _, h := range s.holes {
		if line >= h[0] && line <= h[1] {
			return false
		}
	}
	return true
}

// applies reports whether directive d covers a finding with span s.
func (d *directive) applies(s span) bool {
	if d.target != 0 && d.target == s.start {
		return true
	}
	return s.contains(d.line)
}

// stmtSpan computes the span of the innermost statement enclosing pos. For a
// compound statement (if, for, switch, select, case clause) only its header
// counts, up to the opening brace or colon, so that a directive inside a
// block applies only to the statement it sits on.
func stmtSpan(file *ast.File, tf *token.File, pos token.Pos) span {
	path, _ := astutil.PathEnclosingInterval(file, pos, pos)
	var node ast.Node
	end := token.NoPos
loop:
	for _, n := range path {
		switch n := n.(type) {
		case *ast.BlockStmt, *ast.LabeledStmt:
			continue
		case *ast.IfStmt:
			node, end = n, n.Body.Lbrace
		case *ast.ForStmt:
			node, end = n, n.Body.Lbrace
		case *ast.RangeStmt:
			node, end = n, n.Body.Lbrace
		case *ast.SwitchStmt:
			node, end = n, n.Body.Lbrace
		case *ast.TypeSwitchStmt:
			node, end = n, n.Body.Lbrace
		case *ast.SelectStmt:
			node, end = n, n.Body.Lbrace
		case *ast.CaseClause:
			node, end = n, n.Colon
		case *ast.CommClause:
			node, end = n, n.Colon
		case ast.Stmt, ast.Spec:
			node, end = n, n.End()
		case *ast.GenDecl:
			node, end = n, n.End()
		default:
			continue
		}
		break loop
	}
	if node == nil {
		l := tf.Line(pos)
		return span{start: l, end: l}
	}
	s := span{start: tf.Line(node.Pos()), end: tf.Line(end)}
	ast.Inspect(node, func(n ast.Node) bool {
		if n == nil || n.Pos() >= end {
			return false
		}
		if lit, ok := n.(*ast.FuncLit); ok {
			open, closing := tf.Line(lit.Body.Lbrace), tf.Line(lit.Body.Rbrace)
			if closing-open > 1 {
				s.holes = append(s.holes, [2]int{open + 1, closing - 1})
			}
			return false
		}
		return true
	})
	return s
}
