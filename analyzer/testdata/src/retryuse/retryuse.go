// Package retryuse passes sends to in-house retry helpers. // want package:"uses nats.go"
package retryuse

import (
	"context"
	"errors"
	"time"

	"retrylib"

	"github.com/nats-io/nats.go"
)

func retryCreate(nc *nats.Conn, body []byte) error {
	return retrylib.Do(3, func() error {
		_, err := nc.Request("orders.create", body, time.Second) // want `call of \(\*nats.Conn\).Request is retried on failure by retrylib.Do`
		return err
	})
}

func retryWithContext(ctx context.Context, nc *nats.Conn, body []byte) error {
	return retrylib.WithContext(ctx, func(ctx context.Context) error {
		_, err := nc.RequestWithContext(ctx, "orders.create", body) // want `retried on failure by retrylib.WithContext`
		return err
	})
}

// Near miss: the helper retries, but the literal asks again only when
// nobody was listening.
func retryNoResponders(nc *nats.Conn, body []byte) error {
	return retrylib.Do(3, func() error {
		_, err := nc.Request("orders.create", body, time.Second)
		if errors.Is(err, nats.ErrNoResponders) {
			return err
		}
		return nil
	})
}

// Near miss: Each iterates.
func publishEach(nc *nats.Conn, subjects []string) error {
	return retrylib.Each(subjects, func(s string) error {
		return nc.Publish(s, nil)
	})
}

// withRetry is this package's own helper.
func withRetry(n int, fn func() error) (err error) { // want withRetry:`retries parameter 1`
	for i := 0; i < n; i++ {
		if err = fn(); err == nil {
			return nil
		}
	}
	return err
}

// forEach is this package's own iteration helper.
func forEach(subjects []string, fn func(string) error) error {
	for _, s := range subjects {
		if err := fn(s); err != nil {
			return err
		}
	}
	return nil
}

func useLocal(nc *nats.Conn, data []byte) error {
	if err := withRetry(3, func() error { return nc.Publish("audit", data) }); err != nil { // want `call of \(\*nats.Conn\).Publish is retried on failure by retryuse.withRetry`
		return err
	}
	return forEach([]string{"a", "b"}, func(s string) error { return nc.Publish(s, data) })
}

// A helper that passes its parameter on to another package's helper.
func retryEventually(ctx context.Context, nc *nats.Conn, body []byte) error {
	return retrylib.Eventually(ctx, time.Minute, func(ctx context.Context) error {
		_, err := nc.RequestWithContext(ctx, "orders.create", body) // want `retried on failure by retrylib.Eventually`
		return err
	})
}

// checkFor is this package's helper built on withRetry.
func checkFor(f func() error) error { return withRetry(5, f) } // want checkFor:`retries parameter 0`

func useCheckFor(nc *nats.Conn) error {
	return checkFor(func() error { return nc.Publish("audit", nil) }) // want `call of \(\*nats.Conn\).Publish is retried on failure by retryuse.checkFor`
}
