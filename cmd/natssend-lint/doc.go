// Command natssend-lint runs the natssend analyzer (package
// github.com/natssend/natssend/analyzer): it reports raw NATS sends that
// bypass the natssend shim, sends retried on failure, and connections that
// keep nats.go's outgoing reconnect buffer.
//
// Standalone:
//
//	natssend-lint ./...                 # findings on stderr, exit status 3 if any
//	natssend-lint -json ./...           # findings as JSON on stdout, exit status 3 if any
//	natssend-lint -fix ./...            # apply the suggested fixes (raw Publish, PublishMsg, Respond -> shim),
//	                                    # say how many, list what remains (exit status 3 if anything does)
//	natssend-lint -fix -diff ./...      # print them as a unified diff instead (exit status 1 if not empty)
//	natssend-lint -test=false ./...     # do not load test files at all
//	natssend-lint -vet ./...            # check through go vet, which caches the results per package
//	natssend-lint -c=2 ./...            # show two lines of source around each finding
//	natssend-lint -url ./...            # the documentation link after every finding
//	natssend-lint help                  # usage, flags and each category's documentation link
//	natssend-lint help retry            # one category's link
//	natssend-lint -tags=integration ./...
//	natssend-lint -cpuprofile=cpu.out -memprofile=mem.out ./...
//
// As a vet tool:
//
//	go vet -vettool=$(command -v natssend-lint) ./...
//
// The analyzer's own flags work both ways (with go vet, pass them after
// -vettool):
//
//	-categories=rawsend,retry,reconnectbuf,receiver,handler
//	                                         enabled checks (default: all)
//	-shim-packages=path,...                  packages exempt from rawsend and reconnectbuf
//	                                         (default: github.com/natssend/natssend/shim and .../claimcheck)
//	-retry-helpers=importpath.Func,...       functions whose function argument is retried; the list
//	                                         replaces the default one (analyzer.DefaultRetryHelpers):
//	                                         to add a helper, list the defaults you use as well
//	-skip-tests                              report nothing in _test.go files
//	-audit                                   also report every reviewed finding, with its reason,
//	                                         and the unjudged and delegated connects
//	-claim-checks                            claim checks are in use in the module: check receivers
//	                                         in every package, not only where claimcheck is used
//
// Exit status, the same for text and -json output: 3 when there are
// findings, 1 when a package does not build or type-check or the analyzer
// failed, 2 for a usage error (an unknown flag, an invalid -categories
// value, no package), 0 otherwise. The entries -audit lists (reviewed,
// unjudged, delegated) are not findings.
//
// # How it runs
//
// The analyzer declares a fact (this function sends, through that API), so
// that a wrapper that sends, in another package of the module or in
// another module, still makes a retry of it a finding. A plain
// singlechecker would therefore load every dependency from source,
// standard library included, and run the analyzer on all of them.
// natssend-lint instead lists the packages with go/packages (go list
// -deps -export, as any checker does) and type-checks from source only the
// named packages, the dependencies that import nats.go directly or
// through other packages (only those can send) and the main module's
// packages they import (the analyzer infers facts there without NATS too:
// functions that do not return, retry helpers). Every other dependency
// (the standard library, nats.go itself, other modules' packages that do
// not use NATS, which the analyzer infers nothing about under go vet
// either) is read from the compiler's export data,
// as far as a source package imports it. Its cost is that of a checker
// without facts plus the source of the dependencies that use NATS,
// whatever the size of the rest of the dependency graph. (Were the
// analyzer to require another analyzer with facts, whose facts any package
// may carry, every dependency would be loaded from source instead.)
//
// The named packages are type-checked against the export data of those
// source dependencies too, as a checker without facts would, so that they
// need not wait for the dependencies' source: the dependencies are
// type-checked from source at the same time, for their facts, which reach
// the named packages by object path (golang.org/x/tools/go/types/objectpath,
// as go vet's facts travel between processes). Each package is analyzed
// as soon as it is type-checked and the packages it imports are analyzed,
// and its syntax and type information are dropped then: the analyses
// overlap the type checks, and the peak memory is not the whole module's
// syntax. The results are those golang.org/x/tools/go/analysis/checker
// gives over the same packages: the same facts seen by each package, the
// same errors when a package does not type-check.
//
// With -vet it has the go command run this very executable as its vet
// tool (go vet -vettool=<this executable> -json, found with os.Executable,
// so go run works too): each package is type-checked in its own process,
// facts travel between packages in vet's files, and the go command caches
// every result. A second run over unchanged code reads the cache, which
// pays off on large modules; but the first run of a new natssend-lint, or
// with other analyzer flags, runs the analyzer once over every dependency,
// standard library included (see BENCHMARKS.md). -fix always works this
// way (go vet -fix), so that the go command applies the fixes, to the
// main module's packages only.
//
// natssend-lint prints the findings sorted by position and de-duplicated
// (a finding in a file that two packages share, a package and its test
// variant, is reported once), as file:line:col: message lines on stderr
// or, with -json, as one JSON object mapping package IDs to analyzer names
// to findings, in the format of x/tools' checkers. Every finding links to
// the section of its category in docs/checks.md (the analyzer's
// Diagnostic.URL): the text output prints the link, indented, after the
// first finding of each category (after every one with -url), and -json
// gives each finding a "url" field (x/tools' own JSON printer and go vet
// -json drop it; natssend-lint puts it back). golangci-lint shows neither:
// its plugin output has the category as the message's prefix. Build and
// type errors are printed on stderr.
//
// With -vet, -test=false still type-checks test files (go vet checks each
// package with its tests) but reports nothing in them; with -fix it also
// runs the analyzer with -skip-tests, so that no fix is applied to a test
// file. -fix checks the packages before and after go vet -fix applies the
// fixes, prints "natssend-lint: -fix: fixed N findings; M findings without
// a fix remain:" followed by those findings, and exits with status 3 when
// any remain (silently with 0 when there was nothing to fix), as
// golangci-lint's --fix does. N is the count of findings gone after the
// fixes, with the packages checked again. When a fix adds the shim import
// and the module cannot build the shim yet (natssend not required, go.sum
// entries missing), -fix changes nothing, prints the commands to run first
// (natssend is not on the module proxy yet: the go mod edit that requires
// it from a clone, as README says, then go mod tidy) and exits with
// status 1; so does a run whose fixed packages no longer build or check.
// -fix -diff refuses the same way, with the same message and status,
// rather than print a patch whose result does not build. Otherwise it
// prints, as a unified diff, the files -fix would write: the edits
// applied, then formatted as go vet -fix formats them (gofmt, the added
// shim import sorted into place), so that applying the patch gives what
// -fix gives (--- a/path, +++ b/path, paths from the top of the git work
// tree, else the current directory); git apply and patch -p1 accept it.
// It exits with status 1 when the diff is not empty. -fix and -json
// cannot be combined. -vet and -fix need the go command (Go 1.26 or
// later) on $PATH.
//
// When the go command invokes natssend-lint (-V=full, -flags, a vet.cfg
// file), it runs as a vet tool (golang.org/x/tools/go/analysis/unitchecker).
//
// # Reviewed findings
//
// A statement carrying //natssend:reviewed <reason> on its line, or on the
// line above, is not reported for a raw send or a connection. A retried
// send is reviewed only by a reason starting with "retry:", which covers
// the rest of the statement too:
//
//	//natssend:reviewed retry: idempotent upsert keyed by order ID
//
// so that a size justification does not hide a retry by accident. To keep a review log that can be diffed in
// code review, list the reviewed findings with their reasons:
//
//	natssend-lint -audit -json ./... | jq -r '.. | objects | select(.category? == "reviewed") | "\(.posn)\t\(.message)"' | sed "s|$PWD/||" | sort
//
// The positions include line numbers, so strip them (for example with
// sed 's/:[0-9]*:[0-9]*\t/\t/') for a log that only changes when a reviewed
// send or its reason does.
package main
