package plugin

import (
	"fmt"
	"slices"
	"strings"

	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"

	"github.com/natssend/natssend/analyzer"
)

// Name is the name the plugin is registered under, and so the key of its
// entry under linters.settings.custom in a golangci-lint configuration.
const Name = "natssend"

func init() {
	register.Plugin(Name, New)
}

// Settings are the plugin's settings, the "settings" map of its entry under
// linters.settings.custom.natssend. Empty fields keep the analyzer defaults.
type Settings struct {
	// ShimPackages lists the import paths of packages that may send raw
	// (wrappers that do their own sizing). Empty keeps the default: natssend's
	// shim and claimcheck packages.
	ShimPackages []string `json:"shim-packages"`
	// RetryHelpers lists "importpath.Func" names of functions whose function
	// argument is retried, so a send inside it is a retried send. Empty keeps
	// the default: analyzer.DefaultRetryHelpers.
	RetryHelpers []string `json:"retry-helpers"`
	// Categories selects the checks to run: "rawsend", "retry",
	// "reconnectbuf", "receiver", "handler". Empty runs all of them.
	Categories []string `json:"categories"`
	// IncludeTests reports findings in _test.go files too. Absent means true.
	// golangci-lint's own run.tests setting decides whether test files are
	// loaded at all.
	IncludeTests *bool `json:"include-tests"`
	// Audit reports every finding suppressed by a //natssend:reviewed
	// directive as an issue with category "reviewed" and the directive's
	// reason. It is meant for review runs, not for a gate. Absent means
	// false.
	Audit bool `json:"audit"`
	// ClaimChecks says claim checks are in use in the module: the
	// "receiver" check runs in every package, not only in those that use
	// claimcheck, shim.WithClaimChecks or shim.ServeClaimChecks. Absent
	// means false.
	ClaimChecks bool `json:"claim-checks"`
}

// settingKeys are the setting names the plugin knows, in the order they are
// listed in error messages.
var settingKeys = []string{"audit", "categories", "claim-checks", "include-tests", "retry-helpers", "shim-packages"}

// Plugin is the natssend golangci-lint plugin. It implements
// register.LinterPlugin.
type Plugin struct {
	analyzer *analysis.Analyzer
}

var _ register.LinterPlugin = (*Plugin)(nil)

// New builds the plugin from the raw settings golangci-lint passes (the
// decoded YAML map, or nil when there are none). It fails on an unknown
// setting, a value of the wrong type, or a configuration the analyzer
// rejects, and the error names the offending setting or value.
func New(rawSettings any) (register.LinterPlugin, error) {
	s, err := DecodeSettings(rawSettings)
	if err != nil {
		return nil, err
	}
	a, err := analyzer.New(s.Config())
	if err != nil {
		return nil, err // analyzer errors already start with "natssend: "
	}
	return &Plugin{analyzer: withCategoryPrefix(a)}, nil
}

// DecodeSettings decodes and checks the raw settings. Keys are matched
// exactly; any key other than shim-packages, retry-helpers, categories,
// include-tests, audit and claim-checks is an error naming that key.
func DecodeSettings(rawSettings any) (Settings, error) {
	raw, err := register.DecodeSettings[map[string]any](rawSettings)
	if err != nil {
		return Settings{}, fmt.Errorf("natssend: settings: %w", err)
	}
	var unknown []string
	for k := range raw {
		if !slices.Contains(settingKeys, k) {
			unknown = append(unknown, fmt.Sprintf("%q", k))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		word := "setting"
		if len(unknown) > 1 {
			word = "settings"
		}
		return Settings{}, fmt.Errorf("natssend: unknown %s %s (known settings: %s)",
			word, strings.Join(unknown, ", "), strings.Join(settingKeys, ", "))
	}
	s, err := register.DecodeSettings[Settings](rawSettings)
	if err != nil {
		return Settings{}, fmt.Errorf("natssend: settings: %w", err)
	}
	return s, nil
}

// Config returns the analyzer configuration the settings describe: the
// analyzer defaults, overridden by every list setting that is not empty.
// Test files are checked unless include-tests is false.
func (s Settings) Config() analyzer.Config {
	cfg := analyzer.DefaultConfig()
	if len(s.ShimPackages) > 0 {
		cfg.ShimPackages = slices.Clone(s.ShimPackages)
	}
	if len(s.RetryHelpers) > 0 {
		cfg.RetryHelpers = slices.Clone(s.RetryHelpers)
	}
	if len(s.Categories) > 0 {
		cfg.Categories = slices.Clone(s.Categories)
	}
	includeTests := true
	if s.IncludeTests != nil {
		includeTests = *s.IncludeTests
	}
	cfg.SkipTests = !includeTests
	cfg.Audit = s.Audit
	cfg.ClaimChecks = s.ClaimChecks
	return cfg
}

// BuildAnalyzers returns the configured natssend analyzer.
func (p *Plugin) BuildAnalyzers() ([]*analysis.Analyzer, error) {
	return []*analysis.Analyzer{p.analyzer}, nil
}

// GetLoadMode returns register.LoadModeTypesInfo: the analyzer resolves
// calls with type information.
func (p *Plugin) GetLoadMode() string {
	return register.LoadModeTypesInfo
}

// withCategoryPrefix returns an analyzer that runs a and prefixes the message
// of each diagnostic with its category ("rawsend: ...", "retry: ...").
// golangci-lint shows and filters by an issue's text only, dropping
// analysis.Diagnostic.Category, so without the prefix the category would be
// lost; with it, an exclusion rule can select a category by text ("^retry:").
// A message that already starts with its category is left alone.
func withCategoryPrefix(a *analysis.Analyzer) *analysis.Analyzer {
	run := a.Run
	return &analysis.Analyzer{
		Name:             a.Name,
		Doc:              a.Doc,
		URL:              a.URL,
		Requires:         a.Requires,
		ResultType:       a.ResultType,
		FactTypes:        a.FactTypes,
		RunDespiteErrors: a.RunDespiteErrors,
		Run: func(pass *analysis.Pass) (any, error) {
			p := *pass
			report := pass.Report
			p.Report = func(d analysis.Diagnostic) {
				d.Message = prefixCategory(d.Category, d.Message)
				report(d)
			}
			return run(&p)
		},
	}
}

// prefixCategory returns msg prefixed with "category: ", unless category is
// empty or msg already starts with that prefix. An audit entry, whose
// message starts with its category and a space ("unjudged nats.Connect:
// ..."), gets the colon instead of a second category ("unjudged:
// nats.Connect: ...").
func prefixCategory(category, msg string) string {
	if category == "" || strings.HasPrefix(msg, category+": ") {
		return msg
	}
	if rest, ok := strings.CutPrefix(msg, category+" "); ok {
		return category + ": " + rest
	}
	return category + ": " + msg
}
