package main

import (
	"encoding/json"
	"go/token"
	"slices"

	"golang.org/x/tools/go/analysis"
)

// tree returns the results as go/analysis/checker's Graph.PrintJSON
// prints them (read back by readTree), with the Diagnostic.URL of every
// finding by urlKey, which that printer drops: for every action, each
// analyzer's error; for the roots, the requested analyzers' findings.
func (r *run) tree() (jsonTree, map[string]string, error) {
	tree := make(jsonTree)
	urls := make(map[string]string)
	for _, act := range r.actions {
		for _, a := range act.analyzers {
			res := act.results[a]
			var v any
			switch {
			case res.err != nil:
				v = struct {
					Err string `json:"error"`
				}{res.err.Error()}
			case act.root && slices.Contains(r.analyzers, a) && len(res.diags) > 0:
				list := make([]jsonDiagnostic, len(res.diags))
				for i, d := range res.diags {
					list[i] = r.jsonDiag(d)
					if d.URL != "" {
						urls[urlKey(list[i].Posn, d.Message)] = d.URL
					}
				}
				v = list
			default:
				continue
			}
			b, err := json.Marshal(v)
			if err != nil {
				return nil, nil, err
			}
			if tree[act.id] == nil {
				tree[act.id] = make(map[string]json.RawMessage)
			}
			tree[act.id][a.Name] = b
		}
	}
	return tree, urls, nil
}

// jsonDiagnostic is x/tools' JSON form of a diagnostic (driverutil's
// JSONDiagnostic, internal to x/tools), field for field.
type jsonDiagnostic struct {
	Category       string             `json:"category,omitempty"`
	Posn           string             `json:"posn"`
	End            string             `json:"end"`
	Message        string             `json:"message"`
	SuggestedFixes []jsonSuggestedFix `json:"suggested_fixes,omitempty"`
	Related        []jsonRelatedInfo  `json:"related,omitempty"`
}

// jsonSuggestedFix is driverutil.JSONSuggestedFix.
type jsonSuggestedFix struct {
	Message string         `json:"message"`
	Edits   []jsonTextEdit `json:"edits"`
}

// jsonTextEdit is driverutil.JSONTextEdit.
type jsonTextEdit struct {
	Filename string `json:"filename"`
	Start    int    `json:"start"`
	End      int    `json:"end"`
	New      string `json:"new"`
}

// jsonRelatedInfo is driverutil.JSONRelatedInformation.
type jsonRelatedInfo struct {
	Posn    string `json:"posn"`
	End     string `json:"end"`
	Message string `json:"message"`
}

// jsonDiag is d in x/tools' JSON form, as driverutil.JSONTree.Add makes
// it.
func (r *run) jsonDiag(d analysis.Diagnostic) jsonDiagnostic {
	posn := func(p, alt token.Pos) string {
		if p == token.NoPos {
			p = alt
		}
		return r.fset.Position(p).String()
	}
	j := jsonDiagnostic{Category: d.Category, Posn: posn(d.Pos, d.Pos), End: posn(d.End, d.Pos), Message: d.Message}
	for _, fix := range d.SuggestedFixes {
		jf := jsonSuggestedFix{Message: fix.Message}
		for _, e := range fix.TextEdits {
			start, end := r.fset.Position(e.Pos), r.fset.Position(e.End)
			jf.Edits = append(jf.Edits, jsonTextEdit{Filename: start.Filename, Start: start.Offset, End: end.Offset, New: string(e.NewText)})
		}
		j.SuggestedFixes = append(j.SuggestedFixes, jf)
	}
	for _, rel := range d.Related {
		j.Related = append(j.Related, jsonRelatedInfo{Posn: posn(rel.Pos, rel.Pos), End: posn(rel.End, rel.Pos), Message: rel.Message})
	}
	return j
}
