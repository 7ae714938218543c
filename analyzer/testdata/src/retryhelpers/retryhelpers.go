package retryhelpers

import (
	"context"
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
		return shim.Publish(nc, "a", nil) // want `send through shim.Publish inside a function retried by backoff.Retry: a timeout or lost connection`
	}, backoff4.NewExponentialBackOff())

	_ = backoff4.RetryNotify(func() error {
		return shim.Publish(nc, "a", nil) // want `retried by backoff.RetryNotify`
	}, backoff4.NewExponentialBackOff(), nil)

	_, _ = backoff5.Retry(ctx, func() (*nats.Msg, error) {
		return c.Request(ctx, "a", nil) // want `send through \(\*shim.Client\).Request inside a function retried by backoff.Retry`
	})

	_ = avast.Do(func() error {
		return shim.Publish(nc, "a", nil) // want `retried by retry.Do`
	}, avast.Attempts(3))

	_ = sethvargo.Do(ctx, b, func(ctx context.Context) error {
		_, err := c.Request(ctx, "a", nil) // want `retried by retry.Do`
		return sethvargo.RetryableError(err)
	})

	_ = k8sretry.OnError(k8sretry.DefaultRetry, func(error) bool { return true }, func() error {
		return shim.Publish(nc, "a", nil) // want `retried by retry.OnError`
	})

	_ = k8sretry.RetryOnConflict(k8sretry.DefaultRetry, func() error {
		return shim.Publish(nc, "a", nil) // want `retried by retry.RetryOnConflict`
	})

	_ = wait.Poll(time.Second, time.Minute, func() (bool, error) {
		err := shim.Publish(nc, "a", nil) // want `retried by wait.Poll`
		return err == nil, nil
	})

	_ = wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := c.Request(ctx, "a", nil) // want `retried by wait.PollUntilContextTimeout`
		return err == nil, nil
	})

	_ = wait.ExponentialBackoff(wait.Backoff{Steps: 3}, func() (bool, error) {
		return shim.Publish(nc, "a", nil) == nil, nil // want `retried by wait.ExponentialBackoff`
	})

	// A closure in a variable.
	op := func() error { return shim.Publish(nc, "a", nil) } // want `retried by backoff.Retry`
	_ = backoff4.Retry(op, backoff4.NewExponentialBackOff())

	// A named function that sends.
	_ = backoff4.Retry(publishOnce(nc), backoff4.NewExponentialBackOff())
	_ = avast.Do(func() error { return notify(nc) })                // want `send through shim.Publish inside a function retried by retry.Do`
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
