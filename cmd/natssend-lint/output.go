package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/natssend/natssend/analyzer"
)

// jsonTree is the vet tool's JSON output (x/tools' driverutil.JSONTree):
// package ID -> analyzer name -> a list of diagnostics or an error object.
// go vet -json writes one tree per vetted package, one after another.
type jsonTree map[string]map[string]json.RawMessage

// jsonDiag holds the fields of a diagnostic that the driver reads; the
// diagnostic itself is passed through as it came.
type jsonDiag struct {
	Category string `json:"category,omitempty"`
	Posn     string `json:"posn"`
	End      string `json:"end"`
	Message  string `json:"message"`
	URL      string `json:"url,omitempty"`
	Related  []struct {
		Posn    string `json:"posn"`
		End     string `json:"end"`
		Message string `json:"message"`
	} `json:"related,omitempty"`
}

// readTree reads and merges the trees of a go vet -json run.
func readTree(r io.Reader) (jsonTree, error) {
	tree := make(jsonTree)
	dec := json.NewDecoder(r)
	for {
		var t jsonTree
		if err := dec.Decode(&t); err == io.EOF {
			return tree, nil
		} else if err != nil {
			return nil, err
		}
		for id, byAnalyzer := range t {
			if tree[id] == nil {
				tree[id] = make(map[string]json.RawMessage)
			}
			for name, v := range byAnalyzer {
				if prev, ok := tree[id][name]; ok {
					v = concatLists(prev, v)
				}
				tree[id][name] = v
			}
		}
	}
}

// concatLists joins two JSON diagnostic lists; an error object wins.
func concatLists(a, b json.RawMessage) json.RawMessage {
	var la, lb []json.RawMessage
	if json.Unmarshal(a, &la) != nil {
		return a
	}
	if json.Unmarshal(b, &lb) != nil {
		return b
	}
	out, _ := json.Marshal(append(la, lb...))
	return out
}

// finding is one diagnostic kept for output.
type finding struct {
	pkg, analyzer string
	raw           json.RawMessage
	d             jsonDiag
	posn          position
}

// results are the findings of a run, de-duplicated, and the analyzer
// errors.
type results struct {
	diags  []finding
	errors []string
	tree   jsonTree // the same, as a tree for -json
}

// findings returns how many of the diagnostics are findings: the audit
// entries -audit lists (reviewed, unjudged, delegated) are not, so that
// they do not change the exit status.
func (r *results) findings() int {
	n := 0
	for _, f := range r.diags {
		if !auditEntry(f) {
			n++
		}
	}
	return n
}

// auditEntry reports whether f is an entry of -audit, not a finding.
func auditEntry(f finding) bool {
	if f.analyzer != analyzer.Analyzer.Name {
		return false
	}
	switch f.d.Category {
	case analyzer.CategoryReviewed, analyzer.CategoryUnjudged, analyzer.CategoryDelegated:
		return true
	}
	return false
}

// results de-duplicates the tree's diagnostics by analyzer, position and
// message (a finding in a file that two vetted packages share is reported
// once) and, unless tests is set, drops those in _test.go files. Packages
// are visited in order of their IDs, so the package that keeps a finding
// does not depend on the order go vet finished them in. Every diagnostic
// gets its documentation link ("url", see docURL), which x/tools' JSON
// output drops: urls maps urlKey(posn, message) to the Diagnostic.URL the
// analyzer set, when it ran in this process.
func (t jsonTree) results(tests bool, urls map[string]string) (*results, error) {
	res := &results{tree: make(jsonTree)}
	type key struct{ analyzer, posn, end, message string }
	seen := make(map[key]bool)
	for _, id := range slices.Sorted(maps.Keys(t)) {
		for _, name := range slices.Sorted(maps.Keys(t[id])) {
			v := t[id][name]
			var list []json.RawMessage
			if err := json.Unmarshal(v, &list); err != nil {
				var e struct {
					Err string `json:"error"`
				}
				if err := json.Unmarshal(v, &e); err != nil {
					return nil, fmt.Errorf("package %s, analyzer %s: %v", id, name, err)
				}
				res.errors = append(res.errors, fmt.Sprintf("%s: %s: %s", id, name, e.Err))
				res.add(id, name, v)
				continue
			}
			var kept []json.RawMessage
			for _, raw := range list {
				var d jsonDiag
				if err := json.Unmarshal(raw, &d); err != nil {
					return nil, fmt.Errorf("package %s: diagnostic %s: %v", id, raw, err)
				}
				p := parsePosition(d.Posn)
				if !tests && strings.HasSuffix(p.file, "_test.go") {
					continue
				}
				k := key{name, d.Posn, d.End, d.Message}
				if seen[k] {
					continue
				}
				seen[k] = true
				if d.URL == "" {
					if d.URL = urls[urlKey(d.Posn, d.Message)]; d.URL == "" {
						d.URL = docURL(name, d.Category)
					}
					raw = withURL(raw, d.URL)
				}
				kept = append(kept, raw)
				res.diags = append(res.diags, finding{pkg: id, analyzer: name, raw: raw, d: d, posn: p})
			}
			if len(kept) > 0 {
				b, err := json.Marshal(kept)
				if err != nil {
					return nil, err
				}
				res.add(id, name, b)
			}
		}
	}
	slices.SortStableFunc(res.diags, func(a, b finding) int {
		return cmp.Or(a.posn.compare(b.posn), strings.Compare(a.d.Message, b.d.Message))
	})
	return res, nil
}

func (r *results) add(id, name string, v json.RawMessage) {
	if r.tree[id] == nil {
		r.tree[id] = make(map[string]json.RawMessage)
	}
	r.tree[id][name] = v
}

// printJSON prints the findings as one tree, in the format of x/tools'
// checkers (-json).
func (r *results) printJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r.tree, "", "\t")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// printText prints the findings as file:line:col: message lines, each
// related position on its own line after a tab, with context lines lines
// of source around each when context >= 0. The first finding of each
// category (every finding, with allURLs) is followed by its documentation
// link, indented by a tab: "\trawsend: https://...#rawsend".
func (r *results) printText(w io.Writer, context int, allURLs bool) {
	linked := make(map[string]bool)
	for _, f := range r.diags {
		printPlain(w, f.d.Posn, f.d.End, f.d.Message, context)
		for _, rel := range f.d.Related {
			printPlain(w, rel.Posn, rel.End, "\t"+rel.Message, context)
		}
		if f.d.URL != "" && (allURLs || !linked[f.d.URL]) {
			linked[f.d.URL] = true
			fmt.Fprintf(w, "\t%s: %s\n", cmp.Or(f.d.Category, f.analyzer), f.d.URL)
		}
	}
}

// checksURL is the page with one section per natssend category, the
// Diagnostic.URL the analyzer gives every finding.
const checksURL = "https://github.com/natssend/natssend/blob/main/docs/checks.md#"

// docURL returns the documentation link of a finding of analyzer name
// whose URL was lost on the way (go vet -json, like x/tools' own JSON
// output, does not carry it): the section of its category in
// docs/checks.md. TestURLs checks that it is the analyzer's own.
func docURL(name, category string) string {
	if name != "natssend" || category == "" {
		return ""
	}
	return checksURL + category
}

// urlKey identifies a diagnostic for the URL lookup of results.
func urlKey(posn, message string) string { return posn + "\x00" + message }

// withURL returns the JSON object raw with a "url" field set to url.
func withURL(raw json.RawMessage, url string) json.RawMessage {
	if url == "" {
		return raw
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return raw
	}
	b, _ := json.Marshal(url)
	trimmed := strings.TrimRight(string(raw), " \t\r\n")
	if !strings.HasSuffix(trimmed, "}") {
		return raw
	}
	sep := ","
	if len(obj) == 0 {
		sep = ""
	}
	return json.RawMessage(trimmed[:len(trimmed)-1] + sep + `"url":` + string(b) + "}")
}

func printPlain(w io.Writer, posn, end, message string, context int) {
	fmt.Fprintf(w, "%s: %s\n", posn, message)
	if context < 0 {
		return
	}
	start, stop := parsePosition(posn), parsePosition(end)
	if start.file == "" {
		return
	}
	if stop.file == "" {
		stop = start
	}
	data, err := os.ReadFile(start.file)
	if err != nil {
		return
	}
	lines := strings.Split(string(data), "\n")
	for i := start.line - context; i <= stop.line+context; i++ {
		if 1 <= i && i <= len(lines) {
			fmt.Fprintf(w, "%d\t%s\n", i, lines[i-1])
		}
	}
}

// position is a parsed "file:line:col".
type position struct {
	file      string
	line, col int
}

// parsePosition parses "file:line:col"; the zero position if s is not one.
func parsePosition(s string) position {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return position{}
	}
	j := strings.LastIndexByte(s[:i], ':')
	if j < 0 {
		return position{}
	}
	line, err1 := strconv.Atoi(s[j+1 : i])
	col, err2 := strconv.Atoi(s[i+1:])
	if err1 != nil || err2 != nil {
		return position{}
	}
	return position{s[:j], line, col}
}

func (p position) compare(q position) int {
	return cmp.Or(strings.Compare(p.file, q.file), cmp.Compare(p.line, q.line), cmp.Compare(p.col, q.col))
}
