package main

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// shimImport is the import spec a suggested fix adds when the file does
// not import the shim yet: a module that does not require natssend cannot
// build the fixed file until it does.
var shimImport = strconv.Quote(shimPkg)

const (
	natssendModule = "github.com/natssend/natssend"
	shimPkg        = natssendModule + "/shim"
)

// fixEdit is one edit of a suggested fix, as the JSON output gives it:
// byte offsets in the file.
type fixEdit struct {
	Filename string `json:"filename"`
	Start    int    `json:"start"`
	End      int    `json:"end"`
	New      string `json:"new"`
}

// fixPlan is the set of edits -fix makes: the first suggested fix of each
// finding that has one, identical edits made once (two fixes in a file
// both add the shim import), and a fix that overlaps an edit already in
// the plan left out whole, as go vet -fix leaves out a conflicting fix.
type fixPlan struct {
	files     map[string][]fixEdit // by file, sorted by offset
	fixes     int                  // findings whose fix is in the plan
	conflicts int                  // findings whose fix was left out
	shim      bool                 // some fix adds the shim import
}

// planFixes returns the plan for the findings of res.
func planFixes(res *results) (*fixPlan, error) {
	p := &fixPlan{files: make(map[string][]fixEdit)}
	for _, f := range res.diags {
		var d struct {
			Fixes []struct {
				Edits []fixEdit `json:"edits"`
			} `json:"suggested_fixes"`
		}
		if err := json.Unmarshal(f.raw, &d); err != nil {
			return nil, err
		}
		if len(d.Fixes) == 0 || len(d.Fixes[0].Edits) == 0 {
			continue
		}
		edits := d.Fixes[0].Edits
		var add []fixEdit
		ok := true
		for _, e := range edits {
			switch p.fits(e) {
			case editNew:
				add = append(add, e)
			case editConflict:
				ok = false
			}
		}
		if !ok {
			p.conflicts++
			continue
		}
		p.fixes++
		for _, e := range add {
			p.files[e.Filename] = append(p.files[e.Filename], e)
			slices.SortStableFunc(p.files[e.Filename], func(a, b fixEdit) int {
				return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End))
			})
			if strings.Contains(e.New, shimImport) {
				p.shim = true
			}
		}
	}
	return p, nil
}

type editFit int

const (
	editNew      editFit = iota // not in the plan, overlaps nothing
	editSame                    // already in the plan
	editConflict                // overlaps an edit of the plan
)

// fits says how e fits with the edits already in the plan.
func (p *fixPlan) fits(e fixEdit) editFit {
	for _, o := range p.files[e.Filename] {
		switch {
		case o == e:
			return editSame
		case e.Start < o.End && o.Start < e.End,
			e.Start == o.Start && (e.Start == e.End || o.Start == o.End):
			return editConflict
		}
	}
	return editNew
}

// sortedFiles returns the files of the plan in name order.
func (p *fixPlan) sortedFiles() []string {
	return slices.Sorted(maps.Keys(p.files))
}

// apply returns src with the edits applied.
func apply(src []byte, edits []fixEdit) []byte {
	var b []byte
	at := 0
	for _, e := range edits {
		b = append(b, src[at:e.Start]...)
		b = append(b, e.New...)
		at = e.End
	}
	return append(b, src[at:]...)
}
