// Package opids retries shim requests with and without operation IDs. // want package:"uses nats.go"
package opids

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/natssend/natssend/shim"

	"retrylib"
)

// One call with an operation ID and Attempts: the shim sends again only
// what is safe; nothing to report.
func createOrder(ctx context.Context, c *shim.Client, orderID string, body []byte) (*nats.Msg, error) { // want createOrder:`sends via \(\*shim\.Client\)\.Request`
	return c.Request(ctx, "orders.create", body, shim.OperationID(orderID), shim.Attempts(3))
}

// A loop around a request whose operation ID is fixed before it: the
// responder runs the operation once, so a repeat is safe.
func createOrderLoop(ctx context.Context, c *shim.Client, orderID string, body []byte) (*nats.Msg, error) { // want createOrderLoop:`sends via \(\*shim\.Client\)\.Request`
	id := "order-" + orderID
	var lastErr error
	for try := 0; try < 4; try++ {
		reply, err := c.Request(ctx, "orders.create", body, shim.OperationID(id))
		if err == nil {
			return reply, nil
		}
		lastErr = err
		time.Sleep(time.Duration(try) * 100 * time.Millisecond)
	}
	return nil, lastErr
}

// The same with the ID in an options slice built before the loop.
func createOrderOpts(ctx context.Context, c *shim.Client, orderID string, m *nats.Msg) (*nats.Msg, error) { // want createOrderOpts:`sends via \(\*shim\.Client\)\.RequestMsg`
	opts := []shim.CallOption{shim.Attempts(2)}
	opts = append(opts, shim.OperationID(orderID))
	var err error
	for try := 0; try < 4; try++ {
		var reply *nats.Msg
		if reply, err = c.RequestMsg(ctx, m, opts...); err == nil {
			return reply, nil
		}
	}
	return nil, err
}

// Near miss: no operation ID, Attempts or not: the loop repeats a request
// that may have run.
func createOrderBlind(ctx context.Context, c *shim.Client, body []byte) (*nats.Msg, error) { // want createOrderBlind:`sends via \(\*shim\.Client\)\.Request`
	var lastErr error
	for try := 0; try < 4; try++ {
		reply, err := c.Request(ctx, "orders.create", body, shim.Attempts(2)) // want `call of \(\*shim\.Client\)\.Request is retried on failure: it may have run; use a fixed shim\.OperationID the responder de-duplicates, and Attempts`
		if err == nil {
			return reply, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// Near miss: a fresh operation ID per attempt is another operation each
// time, as the responder sees it.
func createOrderFreshID(ctx context.Context, c *shim.Client, body []byte) (*nats.Msg, error) { // want createOrderFreshID:`sends via \(\*shim\.Client\)\.Request`
	var lastErr error
	for try := 0; try < 4; try++ {
		id := fmt.Sprintf("create-%d-%d", time.Now().UnixNano(), try)
		reply, err := c.Request(ctx, "orders.create", body, shim.OperationID(id)) // want `call of \(\*shim\.Client\)\.Request is retried on failure`
		if err == nil {
			return reply, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// A retry helper around a request with a fixed operation ID.
func createOrderHelper(ctx context.Context, c *shim.Client, orderID string, body []byte) error {
	return retrylib.Do(3, func() error {
		_, err := c.Request(ctx, "orders.create", body, shim.OperationID(orderID))
		return err
	})
}

// Near miss: the same helper without the ID.
func createOrderHelperBlind(ctx context.Context, c *shim.Client, body []byte) error {
	return retrylib.Do(3, func() error {
		_, err := c.Request(ctx, "orders.create", body) // want `call of \(\*shim\.Client\)\.Request is retried on failure by retrylib\.Do`
		return err
	})
}

// shim.Retry runs the publish again only when it did not run.
func announce(ctx context.Context, nc *nats.Conn, body []byte) error {
	return shim.Retry(ctx, func(ctx context.Context) error {
		return shim.Publish(nc, "orders.announced", body)
	}, shim.MaxAttempts(5))
}

// Near miss: the same publish in a loop of one's own.
func announceLoop(nc *nats.Conn, body []byte) error { // want announceLoop:`sends via shim\.Publish`
	var err error
	for try := 0; try < 5; try++ {
		if err = shim.Publish(nc, "orders.announced", body); err == nil { // want `call of shim\.Publish is retried on failure: it may be out already; retry with shim\.Retry`
			return nil
		}
	}
	return err
}

// An operation ID on a call that is not a shim request protects nothing:
// the wrapper does not send it.
func forward(ctx context.Context, nc *nats.Conn, subj string, body []byte, opts ...shim.CallOption) error { // want forward:`sends via \(\*nats\.Conn\)\.RequestWithContext`
	_, err := nc.RequestWithContext(ctx, subj, body)
	return err
}

// Near miss of createOrderLoop: the fixed ID goes to a wrapper that does
// not send it, with Attempts as well.
func forwardLoop(ctx context.Context, nc *nats.Conn, orderID string, body []byte) error { // want forwardLoop:`sends via \(\*nats\.Conn\)\.RequestWithContext`
	var err error
	for try := 0; try < 3; try++ {
		if err = forward(ctx, nc, "orders.create", body, shim.OperationID(orderID), shim.Attempts(3)); err == nil { // want `call of forward \(via \(\*nats\.Conn\)\.RequestWithContext\) is retried on failure`
			return nil
		}
		if errors.Is(err, context.Canceled) {
			return err
		}
	}
	return err
}
