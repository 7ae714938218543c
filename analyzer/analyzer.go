package analyzer

import (
	_ "embed"
	"go/ast"
	"go/types"
	"slices"

	"golang.org/x/tools/go/analysis"
)

// docFile and docRest are the package comment, in two files.
var (
	//go:embed doc.go
	docFile string
	//go:embed doc_rest.go
	docRest string
)

// doc is the Analyzer's Doc: the "Analyzer natssend" section of the
// package comment (doc.go and doc_rest.go).
var doc = mustExtractDoc("natssend", docFile, docRest)

// Analyzer is the natssend analysis pass with DefaultConfig. Its Flags set
// the configuration for command-line drivers: -shim-packages,
// -retry-helpers, -categories (comma-separated lists), -skip-tests and
// -audit.
var Analyzer = newDefault()

func newDefault() *analysis.Analyzer {
	a, err := New(DefaultConfig())
	if err != nil {
		// DefaultConfig is a constant of this package, not user input.
		panic("natssend: invalid default configuration: " + err.Error())
	}
	return a
}

// New returns a natssend analyzer for cfg, or an error if cfg does not
// validate. The analyzer's Flags are bound to its own copy of cfg, so a
// command-line driver may still change the settings before it runs.
func New(cfg Config) (*analysis.Analyzer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &checker{cfg: Config{
		ShimPackages: slices.Clone(cfg.ShimPackages),
		RetryHelpers: slices.Clone(cfg.RetryHelpers),
		Categories:   slices.Clone(cfg.Categories),
		SkipTests:    cfg.SkipTests,
		Audit:        cfg.Audit,
		ClaimChecks:  cfg.ClaimChecks,
	}}
	a := &analysis.Analyzer{
		Name:      "natssend",
		Doc:       doc,
		URL:       "https://pkg.go.dev/github.com/natssend/natssend/analyzer",
		Run:       c.run,
		FactTypes: []analysis.Fact{new(sendsFact), new(notDeliveredFact), new(retryHelperFact), new(noReturnFact), new(usesNATSFact), new(optionsFact), new(connectFact), new(ifaceRetryFact)},
	}
	bindFlags(&a.Flags, &c.cfg)
	return a, nil
}

// checker holds the configuration of one Analyzer.
type checker struct {
	cfg Config
}

// sendsFact marks a function or method whose body (outside function
// literals) sends, directly or through another function known to send.
type sendsFact struct {
	// Via names the send API the function ends up calling.
	Via string
	// Kind is what that send does (publish, request, reply, ...).
	Kind uint8
}

// AFact marks sendsFact as an analysis.Fact.
func (*sendsFact) AFact() {}

func (f *sendsFact) String() string { return "sends via " + f.Via }

// state is one pass of the analyzer: the parts below, each owning its
// data, wired together once. The scan (scan.go: scan, call, selector,
// checkConnect) walks the files once and fills the indexes; then run
// asks the checks in order. Who reads what:
//
//   - rep: findings and directives, reported at the end (every check);
//   - vals: function bodies and the values of variables (sends, flow, ids);
//   - graph: calls between the package's functions (sends, retry);
//   - sends: which calls send, and the sendsFact export (retry);
//   - noRet: calls that do not return, for control-flow graphs (retry);
//   - flow: error-flow labels and the package's safe predicates (retry);
//   - ids: fixed message and operation IDs (retry);
//   - flows: NATS values flowing into the user's interfaces (the scan);
//   - conn: connects and the connection options they are given (after
//     the scan: checkConnects);
//   - retry: the retry check, with its helper calls.
type state struct {
	pass *analysis.Pass
	info *types.Info
	set  *settings

	rep   *reporter
	vals  *valueIndex
	graph *callGraph
	sends *sendIndex
	noRet *noReturns
	flow  *errFlow
	ids   *idCheck
	flows *flowCheck
	retry *retryCheck
	conn  *connOpts
	std   map[*types.Package]bool // packages found in the Go root (userPackage)
}

// newState returns the parts of a pass with settings set, wired
// together, before the scan.
func newState(pass *analysis.Pass, set *settings) *state {
	st := &state{pass: pass, info: pass.TypesInfo, set: set}
	st.rep = newReporter(pass, set)
	st.vals = newValueIndex(pass, st.rep.files)
	st.graph = newCallGraph(pass.TypesInfo, pass.Pkg)
	st.graph.bodyOf = func(fn *types.Func) *ast.BlockStmt {
		if fb := st.vals.byFunc[fn]; fb != nil {
			return fb.body
		}
		return nil
	}
	st.sends = newSendIndex(pass, st.vals, st.graph)
	st.noRet = newNoReturns(pass)
	st.flow = newErrFlow(pass, st.vals)
	st.ids = &idCheck{info: pass.TypesInfo, pkg: pass.Pkg, vals: st.vals}
	st.sends.impls = &implIndex{user: st.userPackage}
	st.flows = &flowCheck{info: pass.TypesInfo, pkg: pass.Pkg, rep: st.rep, impls: st.sends.impls}
	st.conn = &connOpts{pass: pass, info: pass.TypesInfo, vals: st.vals}
	st.retry = &retryCheck{
		pass: pass, info: pass.TypesInfo, set: set, rep: st.rep,
		vals: st.vals, sends: st.sends, graph: st.graph, flow: st.flow, noRet: st.noRet, ids: st.ids,
		user: st.userPackage,
	}
	return st
}

// localCall is a call of a function of the package being analyzed.
type localCall struct {
	call   *ast.CallExpr
	callee *types.Func
}

func (c *checker) run(pass *analysis.Pass) (any, error) {
	st := newState(pass, c.cfg.compile())
	// nats.go itself is not analyzed: its sends are the raw send list, and
	// inferring facts there would make Connect, Subscribe, Ack... senders.
	nats := dependsOnNATS(pass)
	infer := inferHere(pass, nats) && !isNATSPackage(pass.Pkg.Path()) && !inGOROOT(pass)
	if infer {
		st.noRet.infer()
	}
	// A package without nats.go is scanned when it retries a method of
	// an interface of the user's own: an importer may implement it with
	// a send (ifaceretry.go).
	full := nats || infer && st.hasIfaceLoops()
	if full && !isNATSPackage(pass.Pkg.Path()) {
		for _, f := range pass.Files {
			st.scan(f)
		}
		st.vals.stores.scanned = true
		st.checkConnects()
		st.checkReceivers()
		st.checkHandlerConns()
		st.sends.propagate()
		st.vals.dropReassigned()
		st.flow.inferPredicates()
		st.retry.inferHelpers()
		if st.set.enabled[CategoryRetry] {
			if len(st.sends.sendCalls) > 0 || st.retry.ifaceCalls > 0 {
				st.retry.inferDeclined()
				st.retry.checkRetries()
			}
			st.reportIfaceRetries()
		} else {
			// A directive on a send may be meant for the disabled retry
			// check: keep it from being called unused.
			for _, call := range st.sends.sendCalls {
				st.rep.add(&finding{category: CategoryRetry, pos: call.Pos(), end: call.End()})
			}
		}
	}
	if !full && infer {
		// A generic retry package needs no NATS import: look at its
		// functions that take a function parameter only (not in the
		// standard library, which has no retry helpers).
		st.retry.scanHelperCandidates()
		st.vals.stores.scanned = true
		st.retry.inferHelpers()
	}
	st.rep.report()
	return nil, nil
}
