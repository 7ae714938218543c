// Package unrelated does not depend on nats.go: its directives are unused.
package unrelated

func f() int {
	return 1 //natssend:reviewed nothing to review here // want `unused //natssend:reviewed directive`
}
