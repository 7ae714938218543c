// Package backoff is a stub of github.com/cenkalti/backoff/v5.
package backoff

import "context"

type Operation[T any] func() (T, error)

type RetryOption func()

func Retry[T any](ctx context.Context, operation Operation[T], opts ...RetryOption) (T, error) {
	return operation()
}

func Permanent(err error) error { return err }
