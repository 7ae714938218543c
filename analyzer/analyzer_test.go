package analyzer_test

import (
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/natssend/natssend/analyzer"
)

// newAnalyzer returns an analyzer for cfg, failing the test on error.
func newAnalyzer(t *testing.T, cfg analyzer.Config) *analysis.Analyzer {
	t.Helper()
	a, err := analyzer.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestRawSend(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.Analyzer, "rawsend")
}

func TestSuggestedFixes(t *testing.T) {
	analysistest.RunWithSuggestedFixes(t, analysistest.TestData(), analyzer.Analyzer, "fix", "fiximport")
}

func TestRetry(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.Categories = []string{analyzer.CategoryRetry}
	analysistest.Run(t, analysistest.TestData(), newAnalyzer(t, cfg), "retry")
}

// TestKeyValueWrites: JetStream KeyValue writes are raw sends, and a
// retried Put is a retry; Create and Update, whose repeat the bucket
// refuses, are not.
func TestKeyValueWrites(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.Analyzer, "kvwrites")
}

// TestGeneratedCodeInfersNothing: a package of the main module whose every
// file is generated code and which does not use NATS gives no facts (a
// loop retrying a function parameter there is no retry helper), as
// natssend-lint reads it from export data; a hand-written one does.
func TestGeneratedCodeInfersNothing(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.Categories = []string{analyzer.CategoryRetry}
	analysistest.Run(t, analysistest.TestData(), newAnalyzer(t, cfg), "gencode/retrier", "gencode/helper", "gencode/app")
}

func TestRetryAcrossPackages(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.Analyzer, "wrappers", "retrywrap", "retryhelpers")
}

func TestReconnectBuf(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.Analyzer, "connect", "connectlib")
}

func TestDirectives(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.Analyzer, "directives", "directives/unrelated")
}

func TestShimPackagesExempt(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.ShimPackages = []string{"exempt"}
	analysistest.Run(t, analysistest.TestData(), newAnalyzer(t, cfg), "exempt", "exempt/sub", "exemptnot")
}

func TestSkipTests(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.SkipTests = true
	analysistest.Run(t, analysistest.TestData(), newAnalyzer(t, cfg), "skiptests")
}

func TestDisabledCategories(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.Categories = []string{analyzer.CategoryRawSend}
	analysistest.Run(t, analysistest.TestData(), newAnalyzer(t, cfg), "categories")
}

func TestAudit(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.Audit = true
	analysistest.Run(t, analysistest.TestData(), newAnalyzer(t, cfg), "audit", "connaudit")
}

func TestConfigValidate(t *testing.T) {
	if err := analyzer.DefaultConfig().Validate(); err != nil {
		t.Errorf("DefaultConfig().Validate() = %v", err)
	}
	if err := (analyzer.Config{}).Validate(); err != nil {
		t.Errorf("Config{}.Validate() = %v", err)
	}
	for _, cfg := range []analyzer.Config{
		{Categories: []string{"rawsend", "bogus"}},
		{Categories: []string{"directive"}},
		{RetryHelpers: []string{"Retry"}},
		{RetryHelpers: []string{"github.com/cenkalti/backoff/v4"}},
		{RetryHelpers: []string{"github.com/cenkalti/backoff/v4."}},
		{RetryHelpers: []string{"example.com/r.(*T.Do"}},
		{ShimPackages: []string{""}},
		{ShimPackages: []string{"example.com/shim/"}},
	} {
		if err := cfg.Validate(); err == nil {
			t.Errorf("%+v: Validate() = nil, want an error", cfg)
		}
		if a, err := analyzer.New(cfg); err == nil || a != nil {
			t.Errorf("%+v: New() = %v, %v; want nil and an error", cfg, a, err)
		}
	}
}

func TestNewCopiesConfig(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.Categories = []string{analyzer.CategoryRetry}
	a := newAnalyzer(t, cfg)
	cfg.Categories[0] = "bogus" // must not affect a
	if got := a.Flags.Lookup("categories").Value.String(); got != analyzer.CategoryRetry {
		t.Errorf("-categories = %q after changing the caller's slice, want %q", got, analyzer.CategoryRetry)
	}
	if a.Name != "natssend" || analyzer.Analyzer.Name != "natssend" {
		t.Errorf("names = %q, %q; want natssend", a.Name, analyzer.Analyzer.Name)
	}
}

func TestFlags(t *testing.T) {
	a := newAnalyzer(t, analyzer.DefaultConfig())
	for _, name := range []string{"shim-packages", "retry-helpers", "categories", "skip-tests", "audit"} {
		if a.Flags.Lookup(name) == nil {
			t.Errorf("flag -%s missing", name)
		}
	}
	if err := a.Flags.Set("categories", "rawsend, bogus"); err == nil {
		t.Error("-categories=rawsend,bogus accepted")
	}
	if err := a.Flags.Set("categories", " rawsend , retry ,"); err != nil {
		t.Errorf("-categories: %v", err)
	} else if got := a.Flags.Lookup("categories").Value.String(); got != "rawsend,retry" {
		t.Errorf("-categories = %q, want rawsend,retry", got)
	}
	if err := a.Flags.Set("retry-helpers", "nodot"); err == nil {
		t.Error("-retry-helpers=nodot accepted")
	}
	if err := a.Flags.Set("shim-packages", "example.com/a,example.com/b"); err != nil {
		t.Errorf("-shim-packages: %v", err)
	}
	if got := a.Flags.Lookup("shim-packages").Value.String(); got != "example.com/a,example.com/b" {
		t.Errorf("-shim-packages = %q", got)
	}
}

func TestDefaultRetryHelpers(t *testing.T) {
	want := []string{
		"github.com/cenkalti/backoff/v4.Retry", "github.com/cenkalti/backoff/v5.Retry",
		"github.com/avast/retry-go.Do", "github.com/sethvargo/go-retry.Do",
		"k8s.io/client-go/util/retry.OnError", "k8s.io/client-go/util/retry.RetryOnConflict",
		"k8s.io/apimachinery/pkg/util/wait.PollUntilContextCancel", "k8s.io/apimachinery/pkg/util/wait.ExponentialBackoff",
	}
	got := make(map[string]bool)
	for _, h := range analyzer.DefaultConfig().RetryHelpers {
		got[h] = true
	}
	for _, h := range want {
		if !got[h] {
			t.Errorf("default retry helpers lack %s", h)
		}
	}
}

// TestHelpersConfigurable checks that only the configured helpers count.
func TestHelpersConfigurable(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.RetryHelpers = []string{"customretry.Do", "customretry.(*Retrier).Do", "customretry.(Retrier).Run", "customretry.Retrier.Again"}
	cfg.Categories = []string{analyzer.CategoryRetry}
	analysistest.Run(t, analysistest.TestData(), newAnalyzer(t, cfg), "customretry")
}

func TestRetryNested(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.Categories = []string{analyzer.CategoryRetry}
	analysistest.Run(t, analysistest.TestData(), newAnalyzer(t, cfg), "retrynested")
}

// TestRetryVersusIteration checks the rule that tells a retry (the same
// operation sent again after a failure) from iteration over items.
func TestRetryVersusIteration(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.Categories = []string{analyzer.CategoryRetry}
	analysistest.Run(t, analysistest.TestData(), newAnalyzer(t, cfg), "iteration")
}

// TestErrorFlow checks the error tests the retry check reads.
func TestErrorFlow(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.Categories = []string{analyzer.CategoryRetry}
	analysistest.Run(t, analysistest.TestData(), newAnalyzer(t, cfg), "errpreds", "errflow")
}

// TestInferredHelpers checks in-house retry helpers found without
// configuration, in the same package and through a fact.
func TestInferredHelpers(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.Categories = []string{analyzer.CategoryRetry}
	analysistest.Run(t, analysistest.TestData(), newAnalyzer(t, cfg), "retrylib", "retryuse")
}

// TestIndirectSends checks retries of sends reached through method
// values, function variables, mutual recursion and timers.
func TestIndirectSends(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.Categories = []string{analyzer.CategoryRetry}
	analysistest.Run(t, analysistest.TestData(), newAnalyzer(t, cfg), "indirect")
}

// TestMessageIDs checks that a JetStream message ID fixed outside the
// retry exempts it however it is set, and a fresh one does not.
func TestMessageIDs(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.Categories = []string{analyzer.CategoryRetry}
	analysistest.Run(t, analysistest.TestData(), newAnalyzer(t, cfg), "msgids")
}

// TestMessages checks that every diagnostic says what and why in one
// short sentence and links to its category's documentation.
func TestMessages(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.Audit = true
	a := newAnalyzer(t, cfg)
	pkgs := []string{"rawsend", "retry", "connect", "directives", "retrynested", "iteration", "errflow", "msgids", "indirect", "retryuse", "audit", "flows", "connectlib", "rpcclient"}
	quiet := &quietT{T: t}
	for _, r := range analysistest.Run(quiet, analysistest.TestData(), a, pkgs...) {
		for _, d := range r.Diagnostics {
			if n := len([]rune(d.Message)); n > 210 {
				t.Errorf("%s: message of %d characters (> 210): %s", r.Pass.Fset.Position(d.Pos), n, d.Message)
			}
			if want := "https://github.com/natssend/natssend/blob/main/docs/checks.md#" + d.Category; d.URL != want {
				t.Errorf("%s: URL %q, want %q", r.Pass.Fset.Position(d.Pos), d.URL, want)
			}
		}
	}
}

// quietT runs analysistest without failing on its expectations: the
// packages' want comments are written for other configurations.
type quietT struct{ *testing.T }

func (q *quietT) Errorf(format string, args ...any) {}

// TestDoc checks that the Analyzer's Doc is doc.go's analyzer section.
func TestDoc(t *testing.T) {
	doc := analyzer.Analyzer.Doc
	summary, rest, _ := strings.Cut(doc, "\n")
	if summary != "report raw NATS sends, retried sends, buffered reconnects and claim-check-blind receivers" {
		t.Errorf("Doc summary = %q", summary)
	}
	for _, want := range []string{"The rule.", "Errors that prove nothing happened.", "What the analyzer cannot see", "Reviewed exceptions", "Receivers (receiver)"} {
		if !strings.Contains(rest, want) {
			t.Errorf("Doc lacks %q", want)
		}
	}
	if strings.Contains(strings.ReplaceAll(doc, `"// natssend:reviewed"`, ""), "// ") {
		t.Error("Doc contains comment markers")
	}
}

// TestFlows checks NATS values flowing into the user's own interfaces,
// and sends through interfaces and fields whose values are known.
func TestFlows(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.Analyzer, "flows")
}

// TestRealCode: shapes of public code that uses nats.go (a poll on a
// value reply, a responder loop, an in-house helper method passing the
// attempt number, a sentinel for a declined request), each beside its
// near miss.
func TestRealCode(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.Categories = []string{analyzer.CategoryRetry}
	analysistest.Run(t, analysistest.TestData(), newAnalyzer(t, cfg), "pace", "realcode", "rpcclient")
}

// TestOperationIDs checks retries of shim requests with operation IDs,
// shim.Retry and shim.Attempts (issue 12), each beside its near miss.
func TestOperationIDs(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.Categories = []string{analyzer.CategoryRetry}
	analysistest.Run(t, analysistest.TestData(), newAnalyzer(t, cfg), "opids")
}

// TestHelperOrder checks in-house retry helpers built on each other: a
// function passing two parameters on to two helpers, one found in the
// same sweep, retries both.
func TestHelperOrder(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.Categories = []string{analyzer.CategoryRetry}
	analysistest.Run(t, analysistest.TestData(), newAnalyzer(t, cfg), "retryorder")
}

// TestReceiversFollowed: callbacks in a variable assigned twice, messages
// subscribed in one method and read in another, and, with -audit, the
// receive paths the check cannot follow, listed as unjudged.
func TestReceiversFollowed(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.Categories = []string{analyzer.CategoryReceiver}
	cfg.ClaimChecks = true
	cfg.Audit = true
	analysistest.Run(t, analysistest.TestData(), newAnalyzer(t, cfg), "receiversfollow")
}

func TestReceivers(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.Categories = []string{analyzer.CategoryReceiver}
	a := newAnalyzer(t, cfg)
	analysistest.Run(t, analysistest.TestData(), a, "receivers", "receiversoff")
	analysistest.RunWithSuggestedFixes(t, analysistest.TestData(), a, "receivefix")
	cfg.ClaimChecks = true
	analysistest.Run(t, analysistest.TestData(), newAnalyzer(t, cfg), "receiverswide")
}

func TestConnectIdioms(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.Audit = true
	cfg.Categories = []string{analyzer.CategoryReconnectBuf}
	analysistest.Run(t, analysistest.TestData(), newAnalyzer(t, cfg), "connidioms", "connidioms/app")
}

func TestHandlerConn(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.Categories = []string{analyzer.CategoryHandler}
	analysistest.RunWithSuggestedFixes(t, analysistest.TestData(), newAnalyzer(t, cfg), "handlers")
}

// TestInterfaceRetries checks a retry through an interface whose sending
// implementation is converted into it in an importing package: an outbox
// relay retrying events.Publisher, wired to JetStream by the command, and
// a sink retrying its Target, registered by a plugin. The auditor's and
// the webhook's implementations do not send: nothing is reported there.
func TestInterfaceRetries(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.Categories = []string{analyzer.CategoryRetry}
	analysistest.Run(t, analysistest.TestData(), newAnalyzer(t, cfg), "ifaceretry/...")
}

// TestDelegation checks connects whose options come from the callers of
// an exported function: listed as delegated with -audit, each call of the
// function judged in the importing package.
func TestDelegation(t *testing.T) {
	cfg := analyzer.DefaultConfig()
	cfg.Audit = true
	cfg.Categories = []string{analyzer.CategoryReconnectBuf}
	analysistest.Run(t, analysistest.TestData(), newAnalyzer(t, cfg), "delegation", "delegation/app")
}
