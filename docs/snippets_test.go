// Package docs_test checks the shell snippets of README.md and docs/*.md:
// every snippet of more than one command is marked either runnable or not
// runnable (with the reason), and, under make docs-check, every runnable
// one is run as pasted, from the directory it names, in a copy of this
// checkout, and each of its commands must end with the exit status it
// states.
//
// A snippet is marked by an HTML comment on the line before its fence:
//
//	<!-- runnable -->                     run from the repository root
//	<!-- runnable dir=@module -->         run in a module of one's own (example.com/svc,
//	                                      the code of examples/toolrecipe/svc, no
//	                                      requirements yet) beside the checkout, which
//	                                      is at ../natssend
//	<!-- runnable slow -->                run only with DOCS_CHECK_SLOW=1 (CI sets it)
//	<!-- runnable skip="make test" -->    a command not run here (CI runs it on its own);
//	                                      it must be in the snippet
//	<!-- not runnable: reason -->
//
// A command ends with status 0 unless its comment ends with "(exit N)".
// A line ending in a backslash continues on the next. natssend-lint, built
// from this checkout, is first on $PATH, as after go install.
package docs_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// root is the repository root, relative to this directory.
const root = ".."

// snippet is one fenced shell block.
type snippet struct {
	file     string // relative to the root
	line     int    // of the opening fence
	marker   string // the comment before it, "" if none
	commands []command
}

// command is one command of a snippet: its text (continuations joined)
// and the exit status it states.
type command struct {
	text string
	line int
	exit int
}

var (
	markerRE = regexp.MustCompile(`^<!--\s*((?:not )?runnable)\b(.*?)\s*-->$`)
	attrRE   = regexp.MustCompile(`(\w+)(?:=("[^"]*"|\S+))?`)
	exitRE   = regexp.MustCompile(`\(exit (\d+)\)\s*$`)
)

// unmarked lists the files whose snippets need no marker, with the reason.
var unmarked = map[string]string{
	"docs/retry-precision.md": "survey commands over checkouts of other repositories, which are not bundled",
}

// markdownFiles returns README.md and the Markdown files under docs/.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	matches, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range matches {
		rel, err := filepath.Rel(root, m)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, rel)
	}
	return files
}

// parse returns the shell snippets of the Markdown file name.
func parse(t *testing.T, name string) []snippet {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	var (
		out     []snippet
		cur     *snippet
		inFence bool
		prev    string // the last non-empty line outside a fence
		pending string // a command continued with a backslash
		pendAt  int
	)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		trimmed := strings.TrimSpace(l)
		if strings.HasPrefix(trimmed, "```") {
			if !inFence {
				inFence = true
				switch strings.TrimSpace(strings.TrimPrefix(trimmed, "```")) {
				case "sh", "bash", "shell":
					cur = &snippet{file: name, line: n}
					if markerRE.MatchString(prev) {
						cur.marker = prev
					}
				}
				continue
			}
			inFence = false
			if cur != nil {
				if pending != "" {
					t.Errorf("%s:%d: the snippet ends in a continued line", name, pendAt)
				}
				out = append(out, *cur)
			}
			cur, pending = nil, ""
			continue
		}
		if !inFence {
			if trimmed != "" {
				prev = trimmed
			}
			continue
		}
		if cur == nil || trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if strings.HasSuffix(l, `\`) {
			if pending == "" {
				pendAt = n
			}
			pending += strings.TrimSuffix(l, `\`) + " "
			continue
		}
		at := n
		if pending != "" {
			l, at, pending = pending+strings.TrimSpace(l), pendAt, ""
		}
		c := command{text: l, line: at}
		if m := exitRE.FindStringSubmatch(l); m != nil {
			c.exit, _ = strconv.Atoi(m[1])
		}
		cur.commands = append(cur.commands, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// attrs parses a runnable marker's attributes.
func attrs(marker string) (map[string][]string, bool) {
	m := markerRE.FindStringSubmatch(marker)
	if m == nil || m[1] != "runnable" {
		return nil, false
	}
	a := make(map[string][]string)
	for _, kv := range attrRE.FindAllStringSubmatch(m[2], -1) {
		v := kv[2]
		if u, err := strconv.Unquote(v); err == nil {
			v = u
		}
		a[kv[1]] = append(a[kv[1]], v)
	}
	return a, true
}

// TestSnippetsMarked: every snippet of more than one command says whether
// it runs as pasted, and every marker is well-formed.
func TestSnippetsMarked(t *testing.T) {
	n := 0
	for _, f := range markdownFiles(t) {
		for _, s := range parse(t, f) {
			if s.marker == "" {
				if len(s.commands) > 1 && unmarked[filepath.ToSlash(f)] == "" {
					t.Errorf("%s:%d: a snippet of %d commands without <!-- runnable --> or <!-- not runnable: reason -->", s.file, s.line, len(s.commands))
				}
				continue
			}
			a, ok := attrs(s.marker)
			if !ok {
				if !strings.Contains(s.marker, "not runnable:") {
					t.Errorf("%s:%d: %s: say why it is not runnable", s.file, s.line, s.marker)
				}
				continue
			}
			n++
			for k, vs := range a {
				switch k {
				case "dir":
					if len(vs) != 1 || (vs[0] != "@module" && !fs.ValidPath(vs[0])) {
						t.Errorf("%s:%d: dir=%q", s.file, s.line, vs)
					}
				case "slow":
				case "skip":
					for _, v := range vs {
						if !hasCommand(s, v) {
							t.Errorf("%s:%d: skip=%q is not a command of the snippet", s.file, s.line, v)
						}
					}
				default:
					t.Errorf("%s:%d: unknown attribute %q", s.file, s.line, k)
				}
			}
		}
	}
	if n == 0 {
		t.Error("no runnable snippet at all")
	}
}

// hasCommand reports whether s has a command whose text, before its
// comment, is cmd.
func hasCommand(s snippet, cmd string) bool {
	for _, c := range s.commands {
		if commandText(c.text) == cmd {
			return true
		}
	}
	return false
}

// commandText returns a command line without its trailing comment.
func commandText(l string) string {
	if i := strings.Index(l, " #"); i >= 0 {
		l = l[:i]
	}
	return strings.TrimSpace(l)
}

// TestSnippetsRun runs every runnable snippet (make docs-check).
func TestSnippetsRun(t *testing.T) {
	if os.Getenv("DOCS_CHECK") == "" {
		t.Skip("runs the documentation's commands: make docs-check (DOCS_CHECK=1)")
	}
	slow := os.Getenv("DOCS_CHECK_SLOW") != ""
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	bin := filepath.Join(work, "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "natssend-lint"), "./cmd/natssend-lint")
	build.Dir = abs
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build natssend-lint: %v\n%s", err, out)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "GOBIN="+bin, "GOWORK=off")
	i := 0
	for _, f := range markdownFiles(t) {
		for _, s := range parse(t, f) {
			a, ok := attrs(s.marker)
			if !ok {
				continue
			}
			i++
			t.Run(fmt.Sprintf("%s:%d", s.file, s.line), func(t *testing.T) {
				if a["slow"] != nil && !slow {
					t.Skip("slow: DOCS_CHECK_SLOW=1 runs it")
				}
				base := filepath.Join(work, strconv.Itoa(i))
				checkout := filepath.Join(base, "natssend")
				if err := copyTree(abs, checkout); err != nil {
					t.Fatal(err)
				}
				dir := checkout
				if d := a["dir"]; d != nil && d[0] == "@module" {
					dir = filepath.Join(base, "svc")
					if err := newModule(abs, dir); err != nil {
						t.Fatal(err)
					}
				} else if d != nil {
					dir = filepath.Join(checkout, filepath.FromSlash(d[0]))
				}
				script := scriptFor(s, a["skip"])
				cmd := exec.Command("bash", "--noprofile", "--norc", "-c", script)
				cmd.Dir, cmd.Env = dir, env
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Errorf("%v\n%s", err, out)
				} else if testing.Verbose() {
					t.Logf("%s", out)
				}
			})
		}
	}
}

// scriptFor returns a bash script that runs s's commands one after the
// other in one shell (so cd carries over) and stops at the first whose
// exit status is not the one it states.
func scriptFor(s snippet, skip []string) string {
	var b strings.Builder
	for _, c := range s.commands {
		text := commandText(c.text)
		skipped := false
		for _, k := range skip {
			skipped = skipped || text == k
		}
		if skipped {
			fmt.Fprintf(&b, "echo %s\n", strconv.Quote("docs-check: "+s.file+":"+strconv.Itoa(c.line)+": skipped: "+text))
			continue
		}
		fmt.Fprintf(&b, "echo %s\n", strconv.Quote("$ "+text))
		fmt.Fprintf(&b, "{ %s\n}; s=$?; if [ $s -ne %d ]; then echo %s \"exit status $s, want %d\"; exit 1; fi\n",
			c.text, c.exit, strconv.Quote("docs-check: "+s.file+":"+strconv.Itoa(c.line)+": "+text+":"), c.exit)
	}
	return b.String()
}

// copyTree copies the checkout at from to to, without .git and bin.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		if rel == ".git" || rel == "bin" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, info.Mode().Perm())
	})
}

// newModule writes a module of one's own at dir: example.com/svc with the
// code of examples/toolrecipe/svc and no requirements yet.
func newModule(checkout, dir string) error {
	src := filepath.Join(checkout, "examples", "toolrecipe", "svc")
	if err := os.MkdirAll(filepath.Join(dir, "svc"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/svc\n\ngo 1.26\n"), 0o644); err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(src, "*.go"))
	if err != nil {
		return err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "svc", filepath.Base(f)), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
