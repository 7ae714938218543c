// Package retry is a stub of github.com/avast/retry-go.
package retry

type RetryableFunc func() error

type Option func()

func Attempts(n uint) Option { return nil }

func Do(retryableFunc RetryableFunc, opts ...Option) error { return retryableFunc() }

func Unrecoverable(err error) error { return err }

type RetryIfFunc func(error) bool

func RetryIf(retryIf RetryIfFunc) Option { return nil }
