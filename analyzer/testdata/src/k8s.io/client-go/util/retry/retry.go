// Package retry is a stub of k8s.io/client-go/util/retry.
package retry

import "k8s.io/apimachinery/pkg/util/wait"

var DefaultRetry = wait.Backoff{Steps: 5}

func OnError(backoff wait.Backoff, retriable func(error) bool, fn func() error) error { return fn() }

func RetryOnConflict(backoff wait.Backoff, fn func() error) error { return fn() }
