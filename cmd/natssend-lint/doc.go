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
//	natssend-lint -test=false ./...     # do not load test files at all
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
