package realcode

import (
	"context"
	"encoding/json"
	"time"

	"github.com/nats-io/nats.go"
	"k8s.io/apimachinery/pkg/util/wait"
)

type readiness struct {
	Ready bool `json:"ready"`
}

// An operator waits for a provisioning request to be answered: an error
// polls again, so the same request goes out after an unknown outcome; the
// success branch tests the reply.
func provision(ctx context.Context, nc *nats.Conn, spec []byte) error {
	return wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		msg, err := nc.Request("db.provision", spec, time.Second) // want `call of \(\*nats\.Conn\)\.Request is retried on failure by wait.PollUntilContextTimeout`
		if err != nil {
			return false, nil
		}
		var r readiness
		if err := json.Unmarshal(msg.Data, &r); err != nil {
			return false, err
		}
		return r.Ready, nil
	})
}

// The same with the answer tested in a branch.
func provisionBranch(nc *nats.Conn, spec []byte) error {
	return wait.PollImmediate(time.Second, time.Minute, func() (bool, error) {
		msg, err := nc.Request("db.provision", spec, time.Second) // want `call of \(\*nats\.Conn\)\.Request is retried on failure by wait.PollImmediate`
		if err != nil {
			return false, nil
		}
		if string(msg.Data) == "ready" {
			return true, nil
		}
		return false, nil
	})
}

// Near miss: the error stops the poll; only a "not yet" answer asks again.
func provisionStop(ctx context.Context, nc *nats.Conn, spec []byte) error {
	return wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		msg, err := nc.Request("db.provision", spec, time.Second)
		if err != nil {
			return false, err
		}
		return string(msg.Data) == "ready", nil
	})
}

// Near miss: a heartbeat polled whatever its outcome, until a deadline
// that is not an answer.
func heartbeatUntil(nc *nats.Conn, deadline time.Time) error {
	return wait.Poll(time.Second, time.Minute, func() (bool, error) {
		if err := nc.Publish("hb", nil); err != nil {
			return false, nil
		}
		if time.Now().After(deadline) {
			return true, nil
		}
		return false, nil
	})
}
