package shim

import (
	"context"

	"github.com/nats-io/nats.go"
)

// discard deletes the payload of the claim check ref (a call's stored
// request, or a reply it read) with the Client's Store. A clean-up that
// could not finish is not dropped: it is recorded as the
// natssend.claimcheck.cleanup.failures metric (error.type: its code) and
// as an event on the call's span in ctx, for the operator to see what the
// bucket's TTL will remove. It waits for the clean-up; call it on a
// goroutine of its own where the call must not wait.
func (c *Client) discard(ctx context.Context, ref *nats.Msg) {
	if err := c.store.Discard(ctx, ref); err != nil {
		c.tel.Resolve().CleanupFailed(ctx, Describe(err).Code, err)
	}
}
