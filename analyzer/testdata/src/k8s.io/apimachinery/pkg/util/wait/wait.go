// Package wait is a stub of k8s.io/apimachinery/pkg/util/wait.
package wait

import (
	"context"
	"time"
)

type Backoff struct {
	Duration time.Duration
	Steps    int
}

type ConditionFunc func() (done bool, err error)

type ConditionWithContextFunc func(context.Context) (done bool, err error)

func Poll(interval, timeout time.Duration, condition ConditionFunc) error { return nil }

func PollUntilContextTimeout(ctx context.Context, interval, timeout time.Duration, immediate bool, condition ConditionWithContextFunc) error {
	return nil
}

func ExponentialBackoff(backoff Backoff, condition ConditionFunc) error { return nil }

func PollImmediate(interval, timeout time.Duration, condition ConditionFunc) error { return nil }

func PollUntilContextCancel(ctx context.Context, interval time.Duration, immediate bool, condition ConditionWithContextFunc) error {
	return nil
}

func PollWithContext(ctx context.Context, interval, timeout time.Duration, condition ConditionWithContextFunc) error {
	return nil
}
