package shim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/natssend/natssend/internal/callerr"
)

// attemptSchedule is the Attempts schedule (see "Attempts: the schedule"
// in the package documentation), shared by every call that can send a
// request more than once: Client.call and RequestMsgStream.
type attemptSchedule struct {
	n        int           // attempts at most (at least 1)
	withID   bool          // the call carries an OperationID
	wait     time.Duration // AttemptTimeout: an attempt's wait when another may follow
	deadline time.Time     // the call's deadline
}

// callTimeout is a call's timeout: its own Timeout when it sets one,
// longer or shorter than the Client's, otherwise the Client's (WithTimeout,
// DefaultTimeout).
func (c *Client) callTimeout(co callOpts) time.Duration {
	if co.timeout > 0 {
		return co.timeout
	}
	return c.timeout
}

// newSchedule returns the schedule of a call with co's options and
// deadline.
func newSchedule(co callOpts, deadline time.Time) attemptSchedule {
	wait := co.attemptWait
	if wait <= 0 {
		wait = DefaultAttemptTimeout
	}
	return attemptSchedule{n: max(co.attempts, 1), withID: co.opID != "", wait: wait, deadline: deadline}
}

// runAttempts calls try for attempt 1, 2, … with a function that says,
// when called (once the attempt is sent), how long it may wait for its
// answer: all the time left for the last attempt and for a call
// without an OperationID (which is sent again only when it certainly did
// not run), otherwise at most AttemptTimeout. It stops at the first
// success, or when another attempt would be the (n+1)th, would repeat a
// failure that resendable refuses, or would start after ctx ended or too
// close to the deadline, and then returns attemptsError of every
// failure. An attempt whose wait ended without an answer
// (errAttemptWait) is followed at once, any other failure after a
// jittered, doubling backoff. A try that reports final ends the call with
// its result as it is (an answer that arrived, whatever comes of it).
func runAttempts[T any](ctx context.Context, s attemptSchedule, try func(attempt int, wait func() time.Duration) (v T, final bool, err error)) (T, error) {
	var zero T
	var errs []error
	backoff := attemptBackoff
	for attempt := 1; ; attempt++ {
		last := attempt >= s.n
		wait := func() time.Duration {
			if !last && s.withID {
				return min(time.Until(s.deadline), s.wait)
			}
			return time.Until(s.deadline)
		}
		v, final, err := try(attempt, wait)
		if final || err == nil {
			return v, err
		}
		errs = append(errs, err)
		if cerr := ctx.Err(); cerr != nil && errors.Is(err, errAttemptWait) {
			// The caller's context ended as the attempt's wait did: the
			// call ends for the caller's reason.
			return zero, ctxEnded(attemptsError(errs), cerr)
		}
		if last || !resendable(err, s.withID) || ctx.Err() != nil {
			return zero, attemptsError(errs)
		}
		if Classify(err) == OutcomeUnknown && errors.Is(err, errAttemptWait) {
			continue // the attempt's wait ended: send again at once
		}
		d := jitter(backoff)
		backoff = min(2*backoff, attemptBackoffMax)
		if time.Until(s.deadline) <= d {
			return zero, attemptsError(errs)
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return zero, attemptsError(errs)
		}
	}
}

// ctxEnded is err, a call's error after an attempt that got no answer,
// when the caller's context ended meanwhile (cerr): its code and errors.Is
// say why the call ended (context.Canceled, context.DeadlineExceeded); its
// outcome stays err's.
func ctxEnded(err, cerr error) error {
	var e *Error
	if errors.Is(err, cerr) || !errors.As(err, &e) || e == nil {
		return err
	}
	ne := e.WithCause(fmt.Errorf("%w; %w", cerr, err))
	ne.Code = callerr.CtxCode(cerr)
	ne.Message = "the call's context ended (" + cerr.Error() + ") " + e.Message
	return ne
}
