// Command natssend-lint runs the natssend analyzer (package
// github.com/natssend/natssend/analyzer): it reports raw NATS sends that
// bypass the natssend shim, sends retried on failure, and connections that
// keep nats.go's outgoing reconnect buffer.
//
// Standalone:
//
//	natssend-lint ./...                 # findings on stderr, exit status 3 if any
//	natssend-lint -json ./...           # findings as JSON on stdout, exit status 0
//	natssend-lint -fix ./...            # apply the suggested fixes (raw Publish, PublishMsg, Respond -> shim)
//	natssend-lint -fix -diff ./...      # print them as a unified diff instead (exit status 1 if not empty)
//	natssend-lint -test=false ./...     # report nothing in _test.go files
//	natssend-lint -c=2 ./...            # show two lines of source around each finding
//	natssend-lint -tags=integration ./...
//
// As a vet tool:
//
//	go vet -vettool=$(command -v natssend-lint) ./...
//
// The analyzer's own flags work both ways (with go vet, pass them after
// -vettool):
//
//	-categories=rawsend,retry,reconnectbuf   enabled checks (default: all)
//	-shim-packages=path,...                  packages exempt from rawsend and reconnectbuf
//	                                         (default: github.com/natssend/natssend/shim and .../claimcheck)
//	-retry-helpers=importpath.Func,...       functions whose function argument is retried; the list
//	                                         replaces the default one (analyzer.DefaultRetryHelpers):
//	                                         to add a helper, list the defaults you use as well
//	-skip-tests                              report nothing in _test.go files
//	-audit                                   also report every reviewed finding, with its reason
//
// # How it runs
//
// Standalone, natssend-lint has the go command run natssend-lint itself as
// its vet tool (go vet -vettool=<this executable> -json, or go vet -fix
// with -fix), found with os.Executable, so that go run works too. The go
// command then type-checks one package per process against its
// dependencies' export data, hands the analyzer's facts about functions
// that send from each package to its importers in vet's own files (so a
// wrapper that sends, in another package or another module, still makes a
// retry of it a finding), and caches every result per package: a second
// run over unchanged code reads the cache, and after an edit only the
// edited package and the packages whose inputs changed with it are
// checked again. Memory is that of the go command and of one package at a
// time per CPU, whatever the size of the dependency graph.
//
// The first run after installing a new natssend-lint, or with a different
// value of one of the analyzer's flags, has an empty cache for it: the go
// command then runs the analyzer, for its facts, on every dependency the
// module's packages import, standard library included, each once. -test,
// -json, -c and -fix do not change what is cached: natssend-lint filters
// and prints the cached results itself.
//
// natssend-lint prints the findings sorted by position and de-duplicated
// (a finding in a file that two vetted packages share is reported once),
// as file:line:col: message lines on stderr or, with -json, as one JSON
// object mapping package IDs to analyzer names to findings, in the format
// of x/tools' checkers. The go command's own messages (build and type
// errors) are passed through on stderr.
//
// With -test=false, test files are still type-checked by the go command
// (vet checks each package with its tests), but nothing in them is
// reported; with -fix, the analyzer is also run with -skip-tests so that
// no fix is applied to a test file. -fix applies the fixes only to
// packages of the main module, as go vet -fix does, and prints nothing
// else: run again without -fix to see what is left. -fix and -json cannot
// be combined.
//
// When the go command invokes natssend-lint (-V=full, -flags, a vet.cfg
// file), it runs as a vet tool (golang.org/x/tools/go/analysis/unitchecker).
// natssend-lint needs the go command (Go 1.26 or later, which caches the
// vet tool's output) on $PATH.
//
// Exit status: 3 when there are findings (text output), 1 when the go
// command, a package (build or type errors) or the analyzer failed, 2 for
// a usage error (an unknown flag, an invalid -categories value, no
// package), 0 otherwise.
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
