package faultmatrix_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// retryOpts keep Retry's backoff short: the rows are about which runs
// happen, not about waiting.
var retryOpts = []shim.RetryOption{shim.MaxAttempts(5), shim.Backoff(time.Millisecond, 4*time.Millisecond)}

// retry runs op under shim.Retry and returns how often op ran and
// Retry's error.
func retry(ctx context.Context, op func(ctx context.Context) error) (int, error) {
	var runs atomic.Int32
	err := shim.Retry(ctx, func(ctx context.Context) error {
		runs.Add(1)
		return op(ctx)
	}, retryOpts...)
	return int(runs.Load()), err
}

func wantRuns(t *testing.T, got, want int) {
	t.Helper()
	if got != want {
		t.Errorf("Retry ran op %d times, want %d", got, want)
	}
}

// shim.Retry around publishes and requests.
func TestRetry(t *testing.T) {
	t.Parallel()
	runRows(t, []fnRow{
		{"ctx cancelled before the first run", func(t *testing.T) {
			e := newEnv(t)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			runs, err := retry(ctx, func(ctx context.Context) error { return shim.PublishContext(ctx, e.caller, "ev.x", nil) })
			wantRuns(t, runs, 0)
			wantErr{outcome: shim.OutcomeNotRun, code: shim.CodeCanceled, is: []error{context.Canceled}, sent: no}.check(t, err)
		}},
		{"publish on a closed connection: not repeated", func(t *testing.T) {
			e := newEnv(t)
			e.caller.Close()
			runs, err := retry(context.Background(), func(ctx context.Context) error { return shim.PublishContext(ctx, e.caller, "ev.x", nil) })
			wantRuns(t, runs, 1)
			wantErr{outcome: shim.OutcomeNotRun, is: []error{nats.ErrConnectionClosed}, sent: no}.check(t, err)
		}},
		{"request too large without claim checks: not repeated", func(t *testing.T) {
			e := newEnv(t)
			h := e.prepare(behave{reply: []byte("r")})
			h.subscribe(t)
			c := shim.NewClient(e.caller)
			runs, err := retry(context.Background(), func(ctx context.Context) error {
				_, err := c.Request(ctx, subject, payload(bigSize, 1))
				return err
			})
			wantRuns(t, runs, 1)
			wantErr{outcome: shim.OutcomeNotRun, code: shim.CodePayloadTooLarge, is: []error{shim.ErrPayloadTooLarge}, sent: no}.check(t, err)
			h.settle(t)
			if n, _ := h.runs(); n != 0 {
				t.Errorf("the handler ran %d times", n)
			}
		}},
		{"request: no responders, then served", func(t *testing.T) {
			e := newEnv(t)
			h := e.prepare(behave{reply: []byte("r")})
			e.expect(e.cp.On(natstest.Rule{Dir: natstest.ToClient, Match: e.noResponders, Hook: func(natstest.Frame) { h.subscribe(e.t) }}))
			c := shim.NewClient(e.caller)
			ctx, cancel := context.WithTimeout(context.Background(), long)
			defer cancel()
			runs, err := retry(ctx, func(ctx context.Context) error {
				_, err := c.Request(ctx, subject, []byte("q"))
				return err
			})
			wantRuns(t, runs, 2)
			ok.check(t, err)
			h.settle(t)
			if n, _ := h.runs(); n != 1 {
				t.Errorf("the handler ran %d times, want 1", n)
			}
			e.checkFaults()
		}},
		{"request: reply lost, not repeated", func(t *testing.T) {
			e := newEnv(t)
			h := e.prepare(behave{reply: []byte("r")})
			h.subscribe(t)
			e.expect(e.cp.On(replyDown(e, natstest.Drop)))
			c := shim.NewClient(e.caller)
			runs, err := retry(context.Background(), func(ctx context.Context) error {
				_, err := c.Request(ctx, subject, []byte("q"), shim.Timeout(short))
				return err
			})
			wantRuns(t, runs, 1)
			unknownTimeout.check(t, err)
			h.settle(t)
			if n, _ := h.runs(); n != 1 {
				t.Errorf("the handler ran %d times, want 1", n)
			}
			e.checkFaults()
		}},
		{"claim-check publish (Store.PublishMsg): caller connection dropped during the first upload", func(t *testing.T) {
			e := newEnv(t)
			rc := storeReceiver(e)
			data := payload(bigSize, 4)
			e.expect(e.cp.On(withAction(chunkUp(2), natstest.Cut)))
			ctx, cancel := context.WithTimeout(context.Background(), long)
			defer cancel()
			runs, err := retry(ctx, func(ctx context.Context) error {
				return e.cst.PublishMsg(ctx, &nats.Msg{Subject: "ev.data", Data: data})
			})
			wantRuns(t, runs, 2)
			ok.check(t, err)
			rc.check(data, 1)
			e.checkLeft(1)
			e.checkFaults()
		}},
	})
}
