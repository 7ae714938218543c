// Package synthgen generates synthetic Go modules for measuring
// natssend-lint against the floor of loading and type-checking the same
// packages (a no-op analyzer, package
// github.com/natssend/natssend/internal/synthgen/noop, standalone and as
// go vet's -vettool).
//
// Every package has raw NATS sends, retry loops, loops over items,
// closures and goroutines, calls through wrappers in other packages, and
// ordinary padding code. By default the module depends on a local stub of
// github.com/nats-io/nats.go through a replace directive, so it builds with
// no network; with Options.RealNATS it requires the real nats.go, and with
// Options.Stdlib every package also imports large standard-library
// packages, so that the dependency graph is that of a real service.
//
// The comparison itself is run by
//
//	go run ./internal/synthgen/cmd/synthbench
//
// (make bench-lint), which measures this repository, generated modules of
// several sizes and any given module directories, and prints wall time and
// peak memory of natssend-lint and of both floors.
package synthgen
