package shim

import "fmt"

// Every option type of the package (Option, HandlerOption, RetryOption,
// and the call options' implementations) has one shape, the one of nats.go's jetstream package and
// of claimcheck: a function that sets its value and returns an error for
// an invalid one. applyOptions applies them in order, skips nil ones and
// keeps the first error; every such error is an INVALID_ARGUMENT *Error
// (not run) wrapping ErrInvalidOption.

// applyOptions applies every option of opts to t and returns the first
// error (the valid options still apply: a Handler with an invalid option
// can report it through its OnError).
func applyOptions[T any, O ~func(*T) error](t *T, opts []O) error {
	var first error
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(t); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// applyEach applies every option of opts with apply, skipping nil ones,
// and returns the first error: applyOptions for the call options, which
// are interfaces so that each call accepts only the options it honours.
func applyEach[O comparable](opts []O, apply func(O) error) error {
	var zero O
	var first error
	for _, o := range opts {
		if o == zero {
			continue
		}
		if err := apply(o); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// invalidOption is the error of an invalid option value.
func invalidOption(format string, args ...any) error {
	return notSent(CodeInvalidArgument, fmt.Sprintf(format, args...)+"; not sent", ErrInvalidOption)
}
