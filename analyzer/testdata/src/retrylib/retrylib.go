// Package retrylib is an in-house retry package: it imports no NATS code.
package retrylib

import (
	"context"
	"errors"
	"time"
)

// Do calls op until it succeeds, up to attempts times.
func Do(attempts int, op func() error) error { // want Do:`retries parameter 1`
	var err error
	for i := 0; i < attempts; i++ {
		if err = op(); err == nil {
			return nil
		}
		time.Sleep(time.Duration(i) * 50 * time.Millisecond)
	}
	return err
}

// WithContext calls op until it succeeds or ctx is done.
func WithContext(ctx context.Context, op func(context.Context) error) error { // want WithContext:`retries parameter 1`
	for {
		err := op(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// Each calls fn once per item: iteration, not a retry.
func Each(items []string, fn func(string) error) error {
	var errs []error
	for _, it := range items {
		if err := fn(it); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Twice calls op twice whatever happens: not a retry either.
func Twice(op func() error) error {
	for i := 0; i < 2; i++ {
		_ = op()
	}
	return nil
}

// Eventually passes op on to WithContext: a retry helper too.
func Eventually(ctx context.Context, d time.Duration, op func(context.Context) error) error { // want Eventually:`retries parameter 2`
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return WithContext(ctx, op)
}
