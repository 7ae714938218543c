package analyzer

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
)

// Diagnostic categories. Every diagnostic the analyzer reports carries one of
// these in analysis.Diagnostic.Category.
const (
	// CategoryRawSend marks a raw NATS send outside the shim packages.
	CategoryRawSend = "rawsend"
	// CategoryRetry marks a send that is retried on failure.
	CategoryRetry = "retry"
	// CategoryReconnectBuf marks a connection that keeps nats.go's
	// outgoing reconnect buffer.
	CategoryReconnectBuf = "reconnectbuf"
	// CategoryReceiver marks a receive path (a raw subscription callback,
	// a JetStream consumer, a micro handler) that reads a message without
	// resolving claim checks, where claim checks are in use.
	CategoryReceiver = "receiver"
	// CategoryHandler marks a shim handler (Handler, JSONHandler,
	// StreamHandler) built without the shim.Conn option it needs.
	CategoryHandler = "handler"
	// CategoryDirective marks a malformed, reasonless or unused
	// //natssend:reviewed directive. It is always enabled.
	CategoryDirective = "directive"
	// CategoryReviewed marks an audit entry: a finding suppressed by a
	// //natssend:reviewed directive, reported only when Config.Audit is set.
	CategoryReviewed = "reviewed"
	// CategoryUnjudged marks an audit entry: a connect whose options the
	// analyzer cannot judge, with why, reported only when Config.Audit is
	// set.
	CategoryUnjudged = "unjudged"
	// CategoryDelegated marks an audit entry: a connect whose options come
	// from the callers of an exported function (a parameter, or a field of
	// a parameter's struct), judged at each call of that function in
	// analyzed code through a fact; the entry names the function. It is
	// not a finding, and is reported only when Config.Audit is set.
	CategoryDelegated = "delegated"
)

// categories returns the categories Config.Categories may name.
func categories() []string {
	return []string{CategoryRawSend, CategoryRetry, CategoryReconnectBuf, CategoryReceiver, CategoryHandler}
}

// Config configures the analyzer. The zero Config enables every category
// with no exempt packages and no retry helpers; DefaultConfig returns the
// recommended settings.
type Config struct {
	// ShimPackages lists the package paths exempt from the "rawsend" and
	// "reconnectbuf" checks: the packages that implement the safe wrappers
	// and must call nats.go directly. A package is exempt when its path
	// equals an entry or starts with the entry followed by "/" (so an entry
	// covers the packages below it), or when it is the external test
	// package (path + "_test") of such a package. The "retry" check still
	// applies inside them.
	ShimPackages []string

	// RetryHelpers lists functions, as "importpath.Func", and methods, as
	// "importpath.Type.Method", that call a function argument repeatedly
	// until it succeeds (importpath.(Type).Method and
	// importpath.(*Type).Method are accepted as the same method). A send
	// inside a closure passed to one of them, or a named function that
	// sends passed to one of them, is reported as a retry. The list
	// replaces the default one: include DefaultRetryHelpers entries to
	// extend it. In-house helpers that call a function parameter again
	// after it failed are found without configuration.
	RetryHelpers []string

	// Categories lists the enabled checks: "rawsend", "retry",
	// "reconnectbuf", "receiver" and "handler". Empty means all of them. Directive problems
	// (category "directive") are always reported.
	Categories []string

	// SkipTests suppresses every diagnostic, directive problems included,
	// in _test.go files. Functions declared in test files still count as
	// senders for the retry check.
	SkipTests bool

	// ClaimChecks says that claim checks are in use in the module: the
	// "receiver" check then runs in every package, not only in those that
	// import claimcheck or call shim.WithClaimChecks or
	// shim.ServeClaimChecks (a service that only receives what another
	// service claim-checks has no such import).
	ClaimChecks bool

	// Audit reports every finding suppressed by a //natssend:reviewed
	// directive as a diagnostic of category "reviewed" carrying the reason,
	// so that the -json output is a review log that can be diffed, and
	// lists the connects the reconnectbuf check cannot judge ("unjudged")
	// or judges at the calls of an exported function ("delegated").
	Audit bool
}

// DefaultConfig returns the recommended configuration: the natssend shim and
// claimcheck packages exempt, the common retry libraries listed as retry
// helpers, every category enabled and test files checked.
func DefaultConfig() Config {
	return Config{
		ShimPackages: []string{shimPath, claimcheckPath},
		RetryHelpers: DefaultRetryHelpers(),
	}
}

// Validate reports an error for an unknown category or a malformed retry
// helper or shim package entry.
func (c Config) Validate() error {
	var errs []error
	for _, cat := range c.Categories {
		if !slices.Contains(categories(), cat) {
			errs = append(errs, fmt.Errorf("natssend: unknown category %q (want one of %s)", cat, strings.Join(categories(), ", ")))
		}
	}
	for _, h := range c.RetryHelpers {
		if _, _, err := splitHelper(h); err != nil {
			errs = append(errs, err)
		}
	}
	for _, p := range c.ShimPackages {
		if p == "" || strings.HasSuffix(p, "/") || strings.ContainsAny(p, " \t") {
			errs = append(errs, fmt.Errorf("natssend: malformed shim package path %q", p))
		}
	}
	return errors.Join(errs...)
}

// canonicalHelper rewrites importpath.(*Type).Method and
// importpath.(Type).Method to importpath.Type.Method, the spelling the
// analyzer matches.
func canonicalHelper(h string) string {
	slash := strings.LastIndex(h, "/")
	i := strings.Index(h[slash+1:], ".(")
	if i < 0 {
		return h
	}
	i += slash + 1
	j := strings.Index(h[i:], ").")
	if j < 0 {
		return h
	}
	j += i
	return h[:i] + "." + strings.TrimPrefix(h[i+2:j], "*") + h[j+1:]
}

// splitHelper splits "importpath.Func" at the last dot after the last slash.
func splitHelper(h string) (pkg, name string, err error) {
	h = canonicalHelper(h)
	if strings.ContainsAny(h, "()*") {
		return "", "", fmt.Errorf("natssend: malformed retry helper %q (want importpath.Func or importpath.Type.Method)", h)
	}
	slash := strings.LastIndex(h, "/")
	dot := strings.LastIndex(h, ".")
	if dot <= slash || dot <= 0 || dot == len(h)-1 || strings.ContainsAny(h, " \t") {
		return "", "", fmt.Errorf("natssend: malformed retry helper %q (want importpath.Func)", h)
	}
	return h[:dot], h[dot+1:], nil
}

// settings is a Config compiled for one analysis pass.
type settings struct {
	shim     []string
	helpers  map[string]bool // "importpath.Func"
	enabled  map[string]bool
	skipTest bool
	audit    bool
	// claimChecks: Config.ClaimChecks.
	claimChecks bool
}

func (c Config) compile() *settings {
	s := &settings{
		shim:     slices.Clone(c.ShimPackages),
		helpers:  make(map[string]bool, len(c.RetryHelpers)),
		enabled:  make(map[string]bool, 5),
		skipTest: c.SkipTests,
		audit:    c.Audit,

		claimChecks: c.ClaimChecks,
	}
	for _, h := range c.RetryHelpers {
		s.helpers[canonicalHelper(h)] = true
	}
	if len(c.Categories) == 0 {
		for _, cat := range categories() {
			s.enabled[cat] = true
		}
	}
	for _, cat := range c.Categories {
		s.enabled[cat] = true
	}
	return s
}

// exempt reports whether the package path is one of the shim packages.
func (s *settings) exempt(path string) bool {
	path = strings.TrimSuffix(path, "_test")
	for _, p := range s.shim {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// listFlag is a flag.Value for a comma-separated list stored in *list.
type listFlag struct {
	list  *[]string
	check func([]string) error
}

func (f listFlag) String() string {
	if f.list == nil {
		return ""
	}
	return strings.Join(*f.list, ",")
}

func (f listFlag) Set(v string) error {
	var l []string
	for e := range strings.SplitSeq(v, ",") {
		if e = strings.TrimSpace(e); e != "" {
			l = append(l, e)
		}
	}
	if f.check != nil {
		if err := f.check(l); err != nil {
			return err
		}
	}
	*f.list = l
	return nil
}

// bindFlags registers the command-line flags that set cfg's fields.
func bindFlags(fs *flag.FlagSet, cfg *Config) {
	fs.Var(listFlag{list: &cfg.ShimPackages, check: func(l []string) error {
		return Config{ShimPackages: l}.Validate()
	}}, "shim-packages", "comma-separated package paths exempt from the rawsend and reconnectbuf checks (an entry also covers the packages below it)")
	fs.Var(listFlag{list: &cfg.RetryHelpers, check: func(l []string) error {
		return Config{RetryHelpers: l}.Validate()
	}}, "retry-helpers", "comma-separated retry helpers as importpath.Func whose function argument is retried; the list replaces the default one (analyzer.DefaultRetryHelpers), so to add a helper repeat the defaults you use, e.g. github.com/cenkalti/backoff/v4.Retry,example.com/acme/retry.Do")
	fs.Var(listFlag{list: &cfg.Categories, check: func(l []string) error {
		return Config{Categories: l}.Validate()
	}}, "categories", "comma-separated enabled checks: rawsend, retry, reconnectbuf, receiver, handler (empty: all)")
	fs.BoolVar(&cfg.SkipTests, "skip-tests", cfg.SkipTests, "report nothing in _test.go files")
	fs.BoolVar(&cfg.ClaimChecks, "claim-checks", cfg.ClaimChecks, "claim checks are in use in this module: check receivers in every package, not only in those that use claimcheck, shim.WithClaimChecks or shim.ServeClaimChecks")
	fs.BoolVar(&cfg.Audit, "audit", cfg.Audit, `report every finding suppressed by //natssend:reviewed as a diagnostic of category "reviewed" with its reason, and list the connects the reconnectbuf check leaves unjudged or delegates to an exported function's calls`)
}
