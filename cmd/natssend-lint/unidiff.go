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

// lineChanges returns the runs of lines that differ between old and edited,
// in order, from a shortest edit script (Myers' algorithm) after the
// common head and tail; past maxEdits edits, one run covers all between.
func lineChanges(old, edited []string) []change {
	head := 0
	for head < len(old) && head < len(edited) && old[head] == edited[head] {
		head++
	}
	tail := 0
	for tail < len(old)-head && tail < len(edited)-head && old[len(old)-1-tail] == edited[len(edited)-1-tail] {
		tail++
	}
	a, b := old[head:len(old)-tail], edited[head:len(edited)-tail]
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	pairs, ok := commonLines(a, b)
	if !ok {
		return []change{{from: head, to: head + len(a), lines: b}}
	}
	var out []change
	x, y := 0, 0
	for _, p := range append(pairs, [2]int{len(a), len(b)}) {
		if p[0] > x || p[1] > y {
			out = append(out, change{from: head + x, to: head + p[0], lines: b[y:p[1]]})
		}
		x, y = p[0]+1, p[1]+1
	}
	return out
}

// maxEdits bounds the edit script lineChanges looks for (its memory grows
// with the square of the length).
const maxEdits = 2000

// commonLines returns the pairs (i, j) of lines a[i] == b[j] kept by a
// shortest edit script from a to b, in order; false past maxEdits edits.
func commonLines(a, b []string) ([][2]int, bool) {
	n, m := len(a), len(b)
	limit := min(n+m, maxEdits)
	// trace[d][k+d] is the furthest x on diagonal k = x-y after d edits.
	var trace [][]int
	prev := []int{0}
	for d := 0; d <= limit; d++ {
		v := make([]int, 2*d+1)
		at := func(row []int, dd, k int) int { return row[k+dd] }
		for k := -d; k <= d; k += 2 {
			var x int
			switch {
			case d == 0:
				x = 0
			case k == -d || (k != d && at(prev, d-1, k-1) < at(prev, d-1, k+1)):
				x = at(prev, d-1, k+1) // a line of b inserted
			default:
				x = at(prev, d-1, k-1) + 1 // a line of a deleted
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[k+d] = x
			if x >= n && y >= m {
				return backtrack(append(trace, v), a, b), true
			}
		}
		trace = append(trace, v)
		prev = v
	}
	return nil, false
}

// backtrack walks the trace of commonLines back from the end and returns
// the diagonal moves, in order.
func backtrack(trace [][]int, a, b []string) [][2]int {
	var pairs [][2]int
	x, y := len(a), len(b)
	for d := len(trace) - 1; d > 0; d-- {
		k := x - y
		prev := trace[d-1]
		at := func(k int) int { return prev[k+d-1] }
		pk := k - 1
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		}
		px := at(pk)
		mx := px
		if pk == k-1 {
			mx = px + 1
		}
		for x > mx {
			x, y = x-1, y-1
			pairs = append(pairs, [2]int{x, y})
		}
		x, y = px, px-pk
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		pairs = append(pairs, [2]int{x, y})
	}
	slices.Reverse(pairs)
	return pairs
}

// writeUnified writes the unified diff from src to dst of one file (git
// apply and patch -p1 read it): "--- a/name", "+++ b/name", and hunks
// with diffContext lines of context, changes closer than twice that in
// one hunk. It writes nothing when they are the same.
func writeUnified(w io.Writer, name, src, dst string) error {
	old, edited := splitLines(src), splitLines(dst)
	chs := lineChanges(old, edited)
	if len(chs) == 0 {
		return nil
	}
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
	_, err := io.WriteString(w, b.String())
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
