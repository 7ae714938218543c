// Package backoff is a stub of github.com/cenkalti/backoff before its
// module paths had a major version (v2.2.1+incompatible).
package backoff

import "time"

type BackOff interface{ NextBackOff() time.Duration }

type ExponentialBackOff struct{}

func (*ExponentialBackOff) NextBackOff() time.Duration { return 0 }

func NewExponentialBackOff() *ExponentialBackOff { return &ExponentialBackOff{} }

type Operation func() error

type Notify func(error, time.Duration)

func Retry(o Operation, b BackOff) error                 { return o() }
func RetryNotify(o Operation, b BackOff, n Notify) error { return o() }

type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }

func Permanent(err error) *PermanentError { return &PermanentError{err} }
