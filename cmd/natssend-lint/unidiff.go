package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// diffContext is the number of unchanged lines around each change, as
// diff -u and git diff show.
const diffContext = 3

// change is one run of changed lines: old lines [from, to) become lines.
type change struct {
	from, to int
	lines    []string
}

// splitLines splits s into lines, each with its "\n" (the last one
// without, when s does not end with one).
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// changes returns the runs of lines the edits change in src, in order:
// each edit changes the lines it touches (an insertion the line it is
// in), and runs that share a line are one.
func changes(src string, edits []fixEdit) ([]change, error) {
	starts := []int{0} // offset of each line
	for i := range len(src) {
		if src[i] == '\n' && i+1 < len(src) {
			starts = append(starts, i+1)
		}
	}
	lineOf := func(off int) int {
		i, found := slices.BinarySearch(starts, off)
		if !found {
			i--
		}
		return i
	}
	lineEnd := func(l int) int {
		if l+1 < len(starts) {
			return starts[l+1]
		}
		return len(src)
	}
	var out []change
	var group []fixEdit
	from, to := -1, -1
	flush := func() {
		if from < 0 {
			return
		}
		lo := starts[from]
		rel := make([]fixEdit, len(group))
		for i, e := range group {
			rel[i] = fixEdit{Start: e.Start - lo, End: e.End - lo, New: e.New}
		}
		text := string(apply([]byte(src[lo:lineEnd(to-1)]), rel))
		var lines []string
		if text != "" {
			lines = splitLines(text)
		}
		// Lines the edits leave as they were are context, not changes
		// (an import added at the end of the line before it).
		f, t := from, to
		for f < t && len(lines) > 0 && lines[0] == src[starts[f]:lineEnd(f)] {
			f, lines = f+1, lines[1:]
		}
		for f < t && len(lines) > 0 && lines[len(lines)-1] == src[starts[t-1]:lineEnd(t-1)] {
			t, lines = t-1, lines[:len(lines)-1]
		}
		out = append(out, change{from: f, to: t, lines: lines})
		group = group[:0]
	}
	for _, e := range edits {
		if e.Start < 0 || e.End < e.Start || e.End > len(src) {
			return nil, fmt.Errorf("%s: an edit at %d-%d is outside the file (%d bytes)", e.Filename, e.Start, e.End, len(src))
		}
		first := lineOf(e.Start)
		last := first
		if e.End > e.Start {
			last = lineOf(e.End - 1)
		}
		if from >= 0 && first < to {
			to = max(to, last+1)
		} else {
			flush()
			from, to = first, last+1
		}
		group = append(group, e)
	}
	flush()
	return out, nil
}

// writeUnified writes the unified diff of one file (git apply and patch
// -p1 read it): "--- a/name", "+++ b/name", and hunks with diffContext
// lines of context, changes closer than twice that in one hunk.
func writeUnified(w io.Writer, name, src string, edits []fixEdit) error {
	chs, err := changes(src, edits)
	if err != nil || len(chs) == 0 {
		return err
	}
	old := splitLines(src)
	var b strings.Builder
	fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n", name, name)
	delta := 0 // new line number - old line number, before the hunk
	for i := 0; i < len(chs); {
		j := i + 1
		for j < len(chs) && chs[j].from-chs[j-1].to <= 2*diffContext {
			j++
		}
		start := max(chs[i].from-diffContext, 0)
		end := min(chs[j-1].to+diffContext, len(old))
		var body []string
		oldN, newN := 0, 0
		at := start
		for _, c := range chs[i:j] {
			for ; at < c.from; at++ {
				body = append(body, " "+old[at])
				oldN++
				newN++
			}
			for ; at < c.to; at++ {
				body = append(body, "-"+old[at])
				oldN++
			}
			for _, l := range c.lines {
				body = append(body, "+"+l)
				newN++
			}
		}
		for ; at < end; at++ {
			body = append(body, " "+old[at])
			oldN++
			newN++
		}
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", hunkRange(start, oldN), hunkRange(start+delta, newN))
		for _, l := range body {
			b.WriteString(l)
			if !strings.HasSuffix(l, "\n") {
				b.WriteString("\n\\ No newline at end of file\n")
			}
		}
		for _, c := range chs[i:j] {
			delta += len(c.lines) - (c.to - c.from)
		}
		i = j
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// hunkRange formats a hunk's range of n lines from the 0-based line
// start: "l,n" with l 1-based, or the line before for an empty range.
func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
