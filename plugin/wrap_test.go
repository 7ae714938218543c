package plugin

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"
)

// TestCategoryPrefix runs the analyzer the plugin builds over a fixture and
// checks that each message starts with its category, which is all that
// golangci-lint shows of it.
func TestCategoryPrefix(t *testing.T) {
	p, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	as, err := p.BuildAnalyzers()
	if err != nil {
		t.Fatal(err)
	}
	analysistest.Run(t, analysistest.TestData(), as[0], "fixture")
}

// TestCategoryPrefixSelectsCategories checks that the categories setting
// reaches the analyzer: with only retry enabled the raw sends and the
// connect go unreported.
func TestCategoryPrefixSelectsCategories(t *testing.T) {
	p, err := New(map[string]any{"categories": []any{"retry"}})
	if err != nil {
		t.Fatal(err)
	}
	as, err := p.BuildAnalyzers()
	if err != nil {
		t.Fatal(err)
	}
	results := analysistest.Run(&discard{T: t}, analysistest.TestData(), as[0], "fixture")
	var got []string
	for _, r := range results {
		for _, d := range r.Diagnostics {
			got = append(got, d.Message)
		}
	}
	if len(got) != 1 || len(got[0]) < 7 || got[0][:7] != "retry: " {
		t.Errorf("diagnostics with categories [retry] = %q, want one retry finding", got)
	}
}

func TestPrefixCategory(t *testing.T) {
	for _, tc := range []struct{ cat, msg, want string }{
		{"rawsend", "(*nats.Conn).Publish bypasses", "rawsend: (*nats.Conn).Publish bypasses"},
		{"retry", "retry: already prefixed", "retry: already prefixed"},
		{"retry", "retryable but not prefixed", "retry: retryable but not prefixed"},
		{"", "no category", "no category"},
		{"unjudged", "unjudged nats.Connect: options from a function value", "unjudged: nats.Connect: options from a function value"},
		{"reviewed", "reviewed raw (*nats.Conn).Publish (rawsend): probe", "reviewed: raw (*nats.Conn).Publish (rawsend): probe"},
	} {
		if got := prefixCategory(tc.cat, tc.msg); got != tc.want {
			t.Errorf("prefixCategory(%q, %q) = %q, want %q", tc.cat, tc.msg, got, tc.want)
		}
	}
}

// discard is an analysistest.Testing that ignores the mismatches between
// the fixture's want comments and the diagnostics, for a run whose
// diagnostics are checked by hand.
type discard struct{ *testing.T }

func (discard) Errorf(string, ...any) {}
