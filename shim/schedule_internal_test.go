package shim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/natssend/natssend/outcome"
)

// TestRunAttemptsSchedule: the one attempts driver tries at most n times,
// gives a non-last attempt of a call with an OperationID at most
// AttemptTimeout and the last all the time left, follows an ended wait
// with the next attempt, stops at a failure that must not be repeated or at a final
// answer, and returns every failure.
func TestRunAttemptsSchedule(t *testing.T) {
	unavailable := notSent(CodeUnavailable, "", nil)
	unknown := outcome.New(CodeDeadlineExceeded, "", OutcomeUnknown, errAttemptWait)
	invalid := notSent(CodeInvalidArgument, "", nil)
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)

	t.Run("n attempts, then every failure", func(t *testing.T) {
		var waits []time.Duration
		_, err := runAttempts(ctx, attemptSchedule{n: 3, withID: true, wait: time.Second, deadline: deadline},
			func(_ int, wait func() time.Duration) (int, bool, error) {
				waits = append(waits, wait())
				return 0, false, unknown
			})
		if len(waits) != 3 {
			t.Fatalf("%d attempts, want 3", len(waits))
		}
		if waits[0] > time.Second || waits[1] > time.Second || waits[2] <= 5*time.Second {
			t.Fatalf("waits %v: want at most 1s before the last, all the time left for the last", waits)
		}
		if !errors.Is(err, errAttemptWait) || Classify(err) != OutcomeUnknown {
			t.Fatalf("err %v (%v)", err, Classify(err))
		}
		if want := fmt.Sprintf("after %d attempts", 3); !strings.Contains(err.Error(), want) {
			t.Fatalf("err %q does not say %q", err, want)
		}
	})
	t.Run("an ended wait is followed by the next attempt", func(t *testing.T) {
		tries := 0
		_, _ = runAttempts(ctx, attemptSchedule{n: 5, withID: true, wait: time.Millisecond, deadline: deadline},
			func(int, func() time.Duration) (int, bool, error) { tries++; return 0, false, unknown })
		if tries != 5 {
			t.Fatalf("%d attempts, want 5", tries)
		}
	})
	t.Run("without an OperationID an unknown outcome is not repeated", func(t *testing.T) {
		tries := 0
		_, _ = runAttempts(ctx, attemptSchedule{n: 5, wait: time.Second, deadline: deadline},
			func(_ int, wait func() time.Duration) (int, bool, error) {
				tries++
				if w := wait(); w <= 5*time.Second {
					t.Errorf("a call without an OperationID waited %v, want all the time left", w)
				}
				return 0, false, unknown
			})
		if tries != 1 {
			t.Fatalf("%d attempts, want 1", tries)
		}
	})
	t.Run("not run, repeated; invalid, not; final, as it is", func(t *testing.T) {
		tries := 0
		v, err := runAttempts(ctx, attemptSchedule{n: 5, wait: time.Second, deadline: deadline},
			func(attempt int, _ func() time.Duration) (int, bool, error) {
				tries++
				switch attempt {
				case 1:
					return 0, false, unavailable
				case 2:
					return 7, true, invalid
				}
				return 0, false, nil
			})
		if tries != 2 || v != 7 || !errors.Is(err, invalid) {
			t.Fatalf("%d attempts, %d, %v: want 2 attempts and the final answer as it is", tries, v, err)
		}
		tries = 0
		_, err = runAttempts(ctx, attemptSchedule{n: 5, wait: time.Second, deadline: deadline},
			func(int, func() time.Duration) (int, bool, error) { tries++; return 0, false, invalid })
		if tries != 1 || !errors.Is(err, invalid) {
			t.Fatalf("%d attempts of an invalid request: %v", tries, err)
		}
	})
	t.Run("no attempt after the context ends", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		tries := 0
		_, _ = runAttempts(cctx, attemptSchedule{n: 5, wait: time.Second, deadline: deadline},
			func(int, func() time.Duration) (int, bool, error) { tries++; cancel(); return 0, false, unavailable })
		if tries != 1 {
			t.Fatalf("%d attempts after cancel, want 1", tries)
		}
	})
}

// TestRunAttemptsCancelAtWaitEnd: the caller's context ends as an
// attempt's wait does (no answer): the call's error says it was
// cancelled (CodeCanceled, context.Canceled) and stays OutcomeUnknown,
// with every attempt listed; an attempt that got an answer keeps it.
func TestRunAttemptsCancelAtWaitEnd(t *testing.T) {
	deadline := time.Now().Add(10 * time.Second)
	s := attemptSchedule{n: 5, withID: true, wait: time.Second, deadline: deadline}
	wait := outcome.New(CodeDeadlineExceeded, "", OutcomeUnknown, errAttemptTimedOut)
	rejected := outcome.New("BUSY", "", OutcomeRejected, nil)
	rejected.Remote = true
	for _, tc := range []struct {
		name     string
		last     *Error
		code     string
		outcome  Outcome
		canceled bool
	}{
		{"no answer", wait, CodeCanceled, OutcomeUnknown, true},
		{"an answer", rejected, "BUSY", OutcomeUnknown, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_, err := runAttempts(ctx, s, func(attempt int, _ func() time.Duration) (int, bool, error) {
				if attempt == 2 {
					cancel()
					return 0, false, tc.last
				}
				return 0, false, wait
			})
			var e *Error
			if !errors.As(err, &e) || e.Code != tc.code || Classify(err) != tc.outcome || len(e.Attempts) != 2 {
				t.Fatalf("%v: want code %s, %v, 2 attempts", err, tc.code, tc.outcome)
			}
			if errors.Is(err, context.Canceled) != tc.canceled {
				t.Errorf("errors.Is(%v, context.Canceled) = %v", err, !tc.canceled)
			}
		})
	}
}
