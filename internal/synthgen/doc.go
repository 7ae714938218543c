// Package synthgen generates a synthetic Go module for measuring
// natssend-lint against the floor of loading and type-checking the same
// packages (a no-op analyzer, package
// github.com/natssend/natssend/internal/synthgen/noop).
//
// The module has a few hundred packages with raw NATS sends, retry loops,
// loops over items, closures and goroutines, calls through wrappers in other
// packages, and ordinary padding code. It depends on a local stub of
// github.com/nats-io/nats.go through a replace directive, so it builds with
// no network.
//
// The comparison itself is run by
//
//	go run ./internal/synthgen/cmd/synthbench
//
// which generates the module in a temporary directory, builds natssend-lint
// and the no-op checker, runs each several times and prints wall time and
// peak RSS.
package synthgen
