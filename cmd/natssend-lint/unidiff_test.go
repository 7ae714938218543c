package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnifiedGitApply checks writeUnified against git apply: for edits
// of every shape (an insertion at the start, at a line's end, at the end
// of a file with or without a final newline, changes close together and
// far apart, a deletion of whole lines, a change spanning lines, whole-
// file rewrites), the patch applies cleanly and gives what apply gives.
func TestUnifiedGitApply(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "line %02d\n", i)
	}
	src := b.String()
	off := func(line int) int { return strings.Index(src, fmt.Sprintf("line %02d", line)) }
	cases := map[string]struct {
		src   string
		edits []fixEdit
	}{
		"insert at start":        {src, []fixEdit{{Start: 0, End: 0, New: "// head\n"}}},
		"insert at a line's end": {src, []fixEdit{{Start: off(3) + 7, End: off(3) + 7, New: "\nadded"}}},
		"append":                 {src, []fixEdit{{Start: len(src), End: len(src), New: "tail\n"}}},
		"no final newline":       {strings.TrimSuffix(src, "\n"), []fixEdit{{Start: off(40), End: off(40) + 4, New: "LINE"}}},
		"close together":         {src, []fixEdit{{Start: off(10), End: off(10) + 4, New: "x"}, {Start: off(14), End: off(14) + 4, New: "y"}}},
		"far apart": {src, []fixEdit{
			{Start: off(2), End: off(2) + 4, New: "a"}, {Start: off(20), End: off(21), New: ""}, {Start: off(38), End: off(38), New: "b\nc\n"},
		}},
		"across lines":  {src, []fixEdit{{Start: off(5) + 2, End: off(7) + 3, New: "JOINED"}}},
		"two on a line": {src, []fixEdit{{Start: off(9), End: off(9) + 1, New: "L"}, {Start: off(9) + 5, End: off(9) + 7, New: "NINE"}}},
	}
	// Whole-file rewrites, as formatting makes them: lines moved (an
	// import sorted into place), every line changed, lines emptied out.
	moved := strings.Replace(src, "line 03\n", "", 1)
	moved = strings.Replace(moved, "line 07\n", "line 07\nline 03\n", 1)
	rewrites := map[string]string{
		"moved":         moved,
		"all changed":   strings.ReplaceAll(src, "line", "LINE"),
		"every other":   strings.ReplaceAll(strings.ReplaceAll(src, "1\n", "1!\n"), "3\n", "\n"),
		"to empty":      "",
		"same":          src,
		"blank lines":   strings.ReplaceAll(src, "5\n", "5\n\n"),
		"moved to tail": strings.Replace(src, "line 01\n", "", 1) + "line 01\n",
	}
	for name, dst := range rewrites {
		cases[name] = struct {
			src   string
			edits []fixEdit
		}{src, []fixEdit{{Start: 0, End: len(src), New: dst}}}
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "f.go"), []byte(c.src), 0o644); err != nil {
				t.Fatal(err)
			}
			var patch bytes.Buffer
			want := apply([]byte(c.src), c.edits)
			if err := writeUnified(&patch, "f.go", c.src, string(want)); err != nil {
				t.Fatal(err)
			}
			if string(want) == c.src {
				if patch.Len() != 0 {
					t.Errorf("no change, but a patch:\n%s", patch.String())
				}
				return
			}
			if n := strings.Count(patch.String(), "\n-") + strings.Count(patch.String(), "\n+") - 1; name == "moved" && n != 2 {
				t.Errorf("a moved line: %d lines changed (after the +++ header), want 2:\n%s", n, patch.String())
			}
			cmd := exec.Command(git, "apply", "--unsafe-paths", "-")
			cmd.Dir = dir
			cmd.Stdin = bytes.NewReader(patch.Bytes())
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git apply: %v\n%s\n%s", err, out, patch.String())
			}
			got, err := os.ReadFile(filepath.Join(dir, "f.go"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("git apply gives\n%s\nwant\n%s\npatch:\n%s", got, want, patch.String())
			}
		})
	}
}
