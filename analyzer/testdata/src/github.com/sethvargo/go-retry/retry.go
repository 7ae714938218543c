// Package retry is a stub of github.com/sethvargo/go-retry.
package retry

import "context"

type Backoff interface{ Next() (int64, bool) }

type RetryFunc func(ctx context.Context) error

func Do(ctx context.Context, b Backoff, f RetryFunc) error { return f(ctx) }

func RetryableError(err error) error { return err }
