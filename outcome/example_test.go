package outcome_test

import (
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/outcome"
)

// Decide whether a failed operation may be tried again: only what
// certainly did not run is safe to send again blindly.
func ExampleClassify() {
	for _, err := range []error{
		outcome.NotRunError(outcome.CodeUnavailable, "connection closed; not sent", nats.ErrConnectionClosed),
		outcome.MayHaveRunError(outcome.CodeDeadlineExceeded, "no reply before the deadline", nats.ErrTimeout),
		fmt.Errorf("lookup: %w", nats.ErrNoResponders),
	} {
		d := outcome.Describe(err)
		fmt.Printf("%s: %s, retry blindly: %v\n", d.Code, outcome.Classify(err), !outcome.MayHaveRun(err))
	}
	// Output:
	// UNAVAILABLE: not run, retry blindly: true
	// DEADLINE_EXCEEDED: unknown, retry blindly: false
	// NO_RESPONDERS: unknown, retry blindly: false
}
