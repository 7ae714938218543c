package shim

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/callerr"
)

// RetryOption configures Retry. An invalid value makes Retry return an
// error wrapping ErrInvalidOption without running op; a nil RetryOption is
// ignored.
type RetryOption func(*retryOpts) error

type retryOpts struct {
	max              int
	initial, ceiling time.Duration
}

// Defaults of Retry.
const (
	DefaultRetryAttempts   = 3
	DefaultRetryBackoff    = 50 * time.Millisecond
	DefaultRetryBackoffMax = 2 * time.Second
)

// MaxAttempts is a RetryOption of Retry: it sets how often Retry runs op
// at most (DefaultRetryAttempts unless set). It is Retry's counterpart of
// the call option Attempts, which a single Client call takes. n must be at
// least 1.
func MaxAttempts(n int) RetryOption {
	return func(o *retryOpts) error {
		if n < 1 {
			return invalidOption("MaxAttempts(%d): at least 1 attempt", n)
		}
		o.max = n
		return nil
	}
}

// Backoff sets the wait before the second run (initial) and its cap
// (maxWait); it doubles after every run, and each wait is drawn between
// half and all of it (jitter). 0 < initial <= maxWait is required.
func Backoff(initial, maxWait time.Duration) RetryOption {
	return func(o *retryOpts) error {
		if initial <= 0 || maxWait < initial {
			return invalidOption("Backoff(%v, %v): want 0 < initial <= max", initial, maxWait)
		}
		o.initial, o.ceiling = initial, maxWait
		return nil
	}
}

// Retry runs op, and runs it again only while it fails with an error that
// says it certainly did not run (Classify(err) == OutcomeNotRun: no
// responders, refused before sending, the connection down before the
// send, a claim check that was not published), with backoff and jitter
// between runs, at most MaxAttempts times in all and never after ctx is
// done. An error that says the operation may have run (OutcomeUnknown), a
// rejection and success end it at once: those are not safe to repeat
// blindly. A not-run refusal that would be the same again ends it too:
// INVALID_ARGUMENT (an invalid option, a bad subject), a local
// PAYLOAD_TOO_LARGE, a closed connection or store, the caller's own
// cancellation. Attempts follows the same rule.
//
// Use it for code that is not a single Client call: a publish, a claim
// check, a sequence of sends that only fails before its first effect. For
// one request use the call options OperationID and Attempts instead.
//
// After more than one run the error is a *Error listing every run's error
// in Attempts and saying how many runs there were and how each ended;
// errors.Is sees the last run's error. A nil ctx or op is an
// INVALID_ARGUMENT error; op is not run.
func Retry(ctx context.Context, op func(ctx context.Context) error, opts ...RetryOption) error {
	o := retryOpts{max: DefaultRetryAttempts, initial: DefaultRetryBackoff, ceiling: DefaultRetryBackoffMax}
	optErr := applyOptions(&o, opts)
	switch {
	case optErr != nil:
		return optErr
	case ctx == nil:
		return notSent(CodeInvalidArgument, "Retry: nil context; not run", nats.ErrInvalidContext)
	case op == nil:
		return notSent(CodeInvalidArgument, "Retry: nil op; not run", nats.ErrInvalidArg)
	}
	var errs []error
	wait := o.initial
	for run := 1; ; run++ {
		if err := ctx.Err(); err != nil {
			if len(errs) == 0 {
				return notSent(callerr.CtxCode(err), "context done before the first run; not run", err)
			}
			return attemptsError(errs)
		}
		err := noTypedNil(op(ctx))
		if err == nil {
			return nil
		}
		errs = append(errs, err)
		if run >= o.max || !worthRepeating(err) {
			return attemptsError(errs)
		}
		t := time.NewTimer(jitter(wait))
		wait = min(2*wait, o.ceiling)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return attemptsError(errs)
		}
	}
}
