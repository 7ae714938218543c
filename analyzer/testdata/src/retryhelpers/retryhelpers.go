package retryhelpers // want package:"uses nats.go"

import (
	"context"
	"errors"
	"fmt"
	"time"

	avast "github.com/avast/retry-go"
	backoff4 "github.com/cenkalti/backoff/v4"
	backoff5 "github.com/cenkalti/backoff/v5"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	sethvargo "github.com/sethvargo/go-retry"
	"k8s.io/apimachinery/pkg/util/wait"
	k8sretry "k8s.io/client-go/util/retry"

	"github.com/natssend/natssend/shim"
)

func helpers(ctx context.Context, nc *nats.Conn, c *shim.Client, b sethvargo.Backoff) {
	_ = backoff4.Retry(func() error {
		return shim.Publish(nc, "a", nil) // want `call of shim\.Publish is retried on failure by backoff\.Retry: it may be out already; retry with shim\.Retry`
	}, backoff4.NewExponentialBackOff())

	_ = backoff4.RetryNotify(func() error {
		return shim.Publish(nc, "a", nil) // want `retried on failure by backoff.RetryNotify`
	}, backoff4.NewExponentialBackOff(), nil)

	_, _ = backoff5.Retry(ctx, func() (*nats.Msg, error) {
		return c.Request(ctx, "a", nil) // want `call of \(\*shim.Client\).Request is retried on failure by backoff.Retry`
	})

	_ = avast.Do(func() error {
		return shim.Publish(nc, "a", nil) // want `retried on failure by retry.Do`
	}, avast.Attempts(3))

	_ = sethvargo.Do(ctx, b, func(ctx context.Context) error {
		_, err := c.Request(ctx, "a", nil) // want `retried on failure by retry.Do`
		return sethvargo.RetryableError(err)
	})

	_ = k8sretry.OnError(k8sretry.DefaultRetry, func(error) bool { return true }, func() error {
		return shim.Publish(nc, "a", nil) // want `retried on failure by retry.OnError`
	})

	// RetryOnConflict retries only Kubernetes conflict errors, which a
	// NATS send never returns.
	_ = k8sretry.RetryOnConflict(k8sretry.DefaultRetry, func() error {
		return shim.Publish(nc, "a", nil)
	})

	// OnError with a predicate true only for no responders.
	_ = k8sretry.OnError(k8sretry.DefaultRetry, func(err error) bool { return errors.Is(err, nats.ErrNoResponders) }, func() error {
		return shim.Publish(nc, "a", nil)
	})
	_ = k8sretry.OnError(k8sretry.DefaultRetry, isNoResponders, func() error {
		return shim.Publish(nc, "a", nil)
	})
	// Near miss: a predicate that lets timeouts through.
	_ = k8sretry.OnError(k8sretry.DefaultRetry, func(err error) bool {
		return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout)
	}, func() error {
		return shim.Publish(nc, "a", nil) // want `retried on failure by retry.OnError`
	})

	// retry-go's RetryIf.
	_ = avast.Do(func() error {
		_, err := c.Request(ctx, "a", nil)
		return err
	}, avast.RetryIf(func(err error) bool {
		if errors.Is(err, nats.ErrNoResponders) {
			return true
		}
		return false
	}), avast.Attempts(3))
	_ = avast.Do(func() error {
		_, err := c.Request(ctx, "a", nil) // want `retried on failure by retry.Do`
		return err
	}, avast.RetryIf(func(err error) bool { return err != nil }))

	// A poll condition that stops on the send's error.
	_ = wait.Poll(time.Second, time.Minute, func() (bool, error) {
		if err := shim.Publish(nc, "a", nil); err != nil {
			return false, err
		}
		return true, nil
	})
	// Near miss: (false, nil) on failure polls again.
	_ = wait.Poll(time.Second, time.Minute, func() (bool, error) {
		if err := shim.Publish(nc, "a", nil); err != nil { // want `retried on failure by wait.Poll`
			return false, nil
		}
		return true, nil
	})

	_ = wait.Poll(time.Second, time.Minute, func() (bool, error) {
		err := shim.Publish(nc, "a", nil) // want `retried on failure by wait.Poll`
		return err == nil, nil
	})

	_ = wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := c.Request(ctx, "a", nil) // want `retried on failure by wait.PollUntilContextTimeout`
		return err == nil, nil
	})

	_ = wait.ExponentialBackoff(wait.Backoff{Steps: 3}, func() (bool, error) {
		return shim.Publish(nc, "a", nil) == nil, nil // want `retried on failure by wait.ExponentialBackoff`
	})

	// A closure in a variable.
	op := func() error { return shim.Publish(nc, "a", nil) } // want `retried on failure by backoff.Retry`
	_ = backoff4.Retry(op, backoff4.NewExponentialBackOff())

	// A named function that sends.
	_ = backoff4.Retry(publishOnce(nc), backoff4.NewExponentialBackOff())
	_ = avast.Do(func() error { return notify(nc) })                // want `call of notify \(via shim.Publish\) is retried on failure by retry.Do`
	_ = backoff4.Retry(sendNamed, backoff4.NewExponentialBackOff()) // want `backoff.Retry retries sendNamed, which sends through shim.Publish`
}

var conn *nats.Conn

func sendNamed() error { return shim.Publish(conn, "a", nil) } // want sendNamed:`sends via shim.Publish`

func notify(nc *nats.Conn) error { return shim.Publish(nc, "a", nil) } // want notify:`sends via shim.Publish`

func publishOnce(nc *nats.Conn) backoff4.Operation {
	return func() error { return shim.Publish(nc, "a", nil) }
}

// Near misses: closures passed to retry helpers that do not send.
func nearMiss(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, id string) {
	_ = backoff4.Retry(func() error {
		_, err := nc.Subscribe("a", func(m *nats.Msg) {})
		return err
	}, backoff4.NewExponentialBackOff())

	_ = wait.Poll(time.Second, time.Minute, func() (bool, error) {
		return nc.MaxPayload() > 0, nil
	})

	// A JetStream publish with a message ID fixed outside the closure.
	_ = avast.Do(func() error {
		_, err := js.Publish(ctx, "orders", nil, jetstream.WithMsgID(id)) //natssend:reviewed fixture: raw publish, the retry is safe
		return err
	})
}

// Not a retry helper: only the configured functions count.
func notAHelper(nc *nats.Conn, run func(func() error) error) error {
	return run(func() error { return shim.Publish(nc, "a", nil) })
}

// Closures that make the send's failure permanent.
func permanent(ctx context.Context, nc *nats.Conn, c *shim.Client, b sethvargo.Backoff, read func() ([]byte, error)) {
	// Only the read is retried; a failed publish stops backoff.
	_ = backoff4.Retry(func() error {
		data, err := read()
		if err != nil {
			return err
		}
		if err := shim.Publish(nc, "a", data); err != nil {
			return backoff4.Permanent(err)
		}
		return nil
	}, backoff4.NewExponentialBackOff())

	_, _ = backoff5.Retry(ctx, func() (*nats.Msg, error) {
		m, err := c.Request(ctx, "a", nil)
		if err != nil {
			return nil, backoff5.Permanent(err)
		}
		return m, nil
	})

	_ = avast.Do(func() error {
		if err := shim.Publish(nc, "a", nil); err != nil {
			return avast.Unrecoverable(err)
		}
		return nil
	})

	// go-retry retries only errors marked retryable.
	_ = sethvargo.Do(ctx, b, func(ctx context.Context) error {
		_, err := c.Request(ctx, "a", nil)
		return err
	})

	// Retrying on no responders only is safe.
	_ = backoff4.Retry(func() error {
		_, err := c.Request(ctx, "a", nil)
		if errors.Is(err, nats.ErrNoResponders) {
			return err
		}
		return backoff4.Permanent(err)
	}, backoff4.NewExponentialBackOff())
	_ = sethvargo.Do(ctx, b, func(ctx context.Context) error {
		_, err := c.Request(ctx, "a", nil)
		if errors.Is(err, nats.ErrNoResponders) {
			return sethvargo.RetryableError(err)
		}
		return err
	})
}

// Near misses of the above: the failure is retried after all.
func notPermanent(ctx context.Context, nc *nats.Conn, c *shim.Client, b sethvargo.Backoff) {
	// Permanent on one path only.
	_ = backoff4.Retry(func() error {
		err := shim.Publish(nc, "a", nil) // want `call of shim.Publish is retried on failure by backoff.Retry`
		if errors.Is(err, nats.ErrMaxPayload) {
			return backoff4.Permanent(err)
		}
		return err
	}, backoff4.NewExponentialBackOff())

	// Wrapped, but not permanent.
	_ = avast.Do(func() error {
		if err := shim.Publish(nc, "a", nil); err != nil { // want `call of shim.Publish is retried on failure by retry.Do`
			return fmt.Errorf("publish: %w", err)
		}
		return nil
	})

	// Marked retryable on a timeout.
	_ = sethvargo.Do(ctx, b, func(ctx context.Context) error {
		_, err := c.Request(ctx, "a", nil) // want `call of \(\*shim.Client\).Request is retried on failure by retry.Do`
		if errors.Is(err, nats.ErrTimeout) {
			return sethvargo.RetryableError(err)
		}
		return err
	})

	// A closure converted to the helper's function type.
	_ = backoff4.Retry(backoff4.Operation(func() error {
		return shim.Publish(nc, "a", nil) // want `call of shim.Publish is retried on failure by backoff.Retry`
	}), backoff4.NewExponentialBackOff())

	// Near miss: the failure stops, only a success is followed by another
	// attempt (until some other condition holds): a repeat, not a retry,
	// as in loops.
	_ = backoff4.Retry(func() error {
		if err := shim.Publish(nc, "a", nil); err != nil {
			return backoff4.Permanent(err)
		}
		return errors.New("not yet")
	}, backoff4.NewExponentialBackOff())

	// A retry that also repeats after a success is a repeat too.
	_ = backoff4.Retry(func() error {
		if err := shim.Publish(nc, "a", nil); err != nil {
			return err
		}
		return errors.New("condition not met yet")
	}, backoff4.NewExponentialBackOff())
}

func isNoResponders(err error) bool { return errors.Is(err, nats.ErrNoResponders) } // want isNoResponders:`true only when nothing was delivered`
