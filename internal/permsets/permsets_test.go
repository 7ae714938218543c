package permsets

import (
	"sort"
	"testing"
)

// TestPermissionSets: with each documented set every feature of its role
// works; without any one of its grants the step that needs it fails with
// a permission error within deniedBound, never at its deadline, never
// with another error, never silently succeeding. Every row has a server
// of its own.
func TestPermissionSets(t *testing.T) {
	t.Parallel()
	docs := snippets(t)
	users := make([]string, 0, len(docs))
	for u := range docs {
		users = append(users, u)
	}
	sort.Strings(users)
	for _, u := range users {
		s, play := docs[u], roles[u]
		if play == nil {
			continue // TestDocumentedSets reports it
		}
		t.Run(u, func(t *testing.T) {
			t.Parallel()
			t.Run("documented", func(t *testing.T) {
				t.Parallel()
				e := startEnv(t, u, s.text)
				r := &run{e: e}
				play(e, r)
				if !r.ok() {
					t.Errorf("with the documented permissions: %s", r.failed)
				}
			})
			for _, g := range grants(s.perms) {
				t.Run("without "+g.String(), func(t *testing.T) {
					if reason := pending[u+"/without "+g.String()]; reason != "" {
						t.Skip("fails on main today: " + reason)
					}
					t.Parallel()
					name := u + "-less"
					e := startEnv(t, name, without(name, s.perms, g))
					r := &run{e: e}
					play(e, r)
					switch {
					case r.ok():
						t.Errorf("without %s every step succeeded: a silent success", g)
					case !denied(r.failed.err):
						t.Errorf("without %s: %s; want a permission error", g, r.failed)
					case !names(r.failed.err, g):
						t.Errorf("without %s: %s; the permission error does not name a subject %s covers", g, r.failed, g)
					case r.failed.took > deniedBound:
						t.Errorf("without %s: %s; want it within %v", g, r.failed, deniedBound)
					default:
						t.Logf("without %s: %s", g, r.failed)
					}
				})
			}
		})
	}
}
