package claimcheck

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The uploads of a Store share a budget of bytes published and not yet
// acknowledged (Store.sent): with many uploads at once each would have its
// whole window in flight (32 chunks), and on a slow link or a starved
// server the last acknowledgements came after their 10 s timeout
// (chunkAckTimeout) and failed the uploads (issue 46's starved run). The
// budget's limit follows the rate acknowledgements arrive at (what the
// stream stores in sentDelay); a single upload on a fast link keeps its
// whole window.

// uploadBudget is the most a Store's uploads have in flight together, and
// sentDelay how long the stream takes to store it at most, at the rate
// it acknowledges.
// uploadStart is the limit until the rate is measured (a tenth of a
// second of acknowledgements): a Store's first uploads at once do not put
// the whole budget in flight on a link that may be slow.
const (
	uploadBudget = 32 << 20
	uploadStart  = 8 << 20
	sentDelay    = 2 * time.Second
)

// pending is a published message waiting for its acknowledgement, and the
// bytes of the upload budget it holds.
type pending struct {
	paf  jetstream.PubAckFuture
	held int64
}

// upWindow is one upload's messages waiting for their acknowledgements.
type upWindow struct {
	s      *Store
	closed <-chan nats.Status // the connection's close, which nats.go does not report to the futures
	msgs   []pending
}

// publish publishes m asynchronously once the upload budget has room for
// it: while it has none, it waits for the upload's own oldest
// acknowledgement (which makes room), or for room when the upload has
// nothing in flight. With the window full it then waits for the oldest
// acknowledgement. sent says whether m was published.
func (w *upWindow) publish(ctx context.Context, m *nats.Msg) (sent bool, err error) {
	n := int64(len(m.Data))
	held, ok := w.s.sent.TryAcquire(n)
	for !ok {
		if len(w.msgs) == 0 {
			if held, err = w.s.sent.Acquire(ctx, n); err != nil {
				return false, err
			}
			break
		}
		if err := w.pop(ctx); err != nil {
			return false, err
		}
		held, ok = w.s.sent.TryAcquire(n)
	}
	paf, err := w.s.pub.PublishMsgAsync(m, noRetry)
	if err != nil {
		w.s.sent.Release(held)
		return false, err
	}
	w.msgs = append(w.msgs, pending{paf, held})
	if len(w.msgs) >= w.s.cfg.window {
		return true, w.pop(ctx)
	}
	return true, nil
}

// pop waits for the oldest message's acknowledgement and removes it, also
// when it failed, giving its budget back. When ctx ends or the connection
// closes first, it stays.
func (w *upWindow) pop(ctx context.Context) error {
	p := w.msgs[0]
	var err error
	select {
	case ack := <-p.paf.Ok():
		err = w.s.ownAck(ack)
		w.s.sent.Delivered(p.held)
	case err = <-p.paf.Err():
		w.s.sent.Release(p.held)
	case <-ctx.Done():
		return ctx.Err()
	case <-w.closed:
		return nats.ErrConnectionClosed
	}
	w.msgs[0] = pending{}
	w.msgs = w.msgs[1:]
	return err
}

// drain waits for every acknowledgement.
func (w *upWindow) drain(ctx context.Context) error {
	for len(w.msgs) > 0 {
		if err := w.pop(ctx); err != nil {
			return err
		}
	}
	return nil
}

// release gives back the budget of the messages still waiting (an upload
// that failed: whatever comes of them, the upload no longer waits).
func (w *upWindow) release() {
	for _, p := range w.msgs {
		w.s.sent.Release(p.held)
	}
	w.msgs = nil
}
