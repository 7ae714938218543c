// Package e2e tests the golangci-lint binary that tools/golangci builds, as a
// user runs it: golangci-lint run with a configuration that enables natssend
// as a module plugin, read through its JSON report.
//
// The tests build the binary from the parent directory into a temporary
// directory (a relink when the build cache is warm), or use the binary named
// by $NATSSEND_GOLANGCI_LINT, such as the ./bin/golangci-lint that
// `make golangci` builds. They live in a package of their own so that their
// test binary does not link golangci-lint.
package e2e
