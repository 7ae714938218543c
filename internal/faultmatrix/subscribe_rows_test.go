package faultmatrix_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
)

// The claimcheck subscription helpers on the caller's connection
// (e.cst): a claim check on ev.data published on the admin connection,
// the fault on the subscriber's link while it resolves.

// seen records what a subscription helper passed on.
type seen struct {
	mu   sync.Mutex
	msgs [][]byte
	errs []error
}

func (s *seen) msg(b []byte) {
	s.mu.Lock()
	s.msgs = append(s.msgs, append([]byte(nil), b...))
	s.mu.Unlock()
}

func (s *seen) err(err error) {
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
}

func (s *seen) counts() (int, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.msgs), len(s.errs)
}

// check waits for msgs messages and errs errors, then checks that every
// message is want and every error matches is. The wait is the payload's
// read deadline (long), not settle: a read cut mid-download recovers
// through its stall check (2 s), the check that the chunks are still
// stored and a new consumer, which under -race on a loaded machine can
// take longer than settle.
func (s *seen) check(t *testing.T, want []byte, msgs, errs int, is error) {
	t.Helper()
	natstest.Eventually(t, long, func() bool { m, e := s.counts(); return m >= msgs && e >= errs }, "the helper to pass the message on")
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.msgs) != msgs || len(s.errs) != errs {
		t.Errorf("handler got %d messages, error handler %d errors (%v); want %d and %d", len(s.msgs), len(s.errs), s.errs, msgs, errs)
	}
	for _, m := range s.msgs {
		if !bytes.Equal(m, want) {
			t.Errorf("the handler got %d bytes that are not the %d published", len(m), len(want))
		}
	}
	for _, err := range s.errs {
		var re *claimcheck.ResolveError
		if !errors.Is(err, is) || !errors.As(err, &re) {
			t.Errorf("error handler got %v (%T); want a *claimcheck.ResolveError matching %v", err, err, is)
		}
	}
}

// purgeAt purges the bucket's stream when the message on ev.data reaches
// the subscriber: its claim check can no longer be resolved.
func purgeAt(e *env) {
	e.expect(e.cp.On(natstest.Rule{Dir: natstest.ToClient, Subject: "ev.data", Hook: func(natstest.Frame) { e.purgeBucket() }}))
}

// coreSubRow subscribes with Store.Subscribe (or QueueSubscribe with
// DeleteAfterRead), publishes a claim check and checks what arrived.
func coreSubRow(queue bool, fault func(e *env), msgs, errs int, is error, left int) func(t *testing.T) {
	return func(t *testing.T) {
		e := newEnv(t)
		var s seen
		h := func(m *nats.Msg) { s.msg(m.Data) }
		onErr := func(_ *nats.Msg, err error) { s.err(err) }
		var err error
		if queue {
			_, err = e.cst.QueueSubscribe("ev.data", "workers", h, onErr, claimcheck.DeleteAfterRead())
		} else {
			_, err = e.cst.Subscribe("ev.data", h, onErr)
		}
		if err == nil {
			err = e.caller.Flush()
		}
		if err != nil {
			t.Fatal(err)
		}
		if fault != nil {
			fault(e)
		}
		data := payload(bigSize, 9)
		ctx, cancel := context.WithTimeout(context.Background(), long)
		defer cancel()
		if err := e.ast.PublishMsg(ctx, &nats.Msg{Subject: "ev.data", Data: data}); err != nil {
			t.Fatal(err)
		}
		s.check(t, data, msgs, errs, is)
		e.checkLeft(left)
		e.checkFaults()
	}
}

// jsSubRow consumes a claim check from stream EV with Store.Consume (or
// Store.Messages), DeleteAfterRead, and checks what arrived and that the
// message was settled once (acked or, unresolvable, Term'd: no
// redelivery).
func jsSubRow(messages bool, fault func(e *env), msgs, errs int, is error, left int) func(t *testing.T) {
	return func(t *testing.T) {
		e := newEnv(t)
		evStream(t, e)
		ctx, cancel := context.WithTimeout(context.Background(), long)
		defer cancel()
		ajs, err := jetstream.New(e.admin)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ajs.CreateConsumer(ctx, "EV", jetstream.ConsumerConfig{Durable: "w", AckPolicy: jetstream.AckExplicitPolicy, AckWait: long}); err != nil {
			t.Fatal(err)
		}
		cjs, err := jetstream.New(e.caller)
		if err != nil {
			t.Fatal(err)
		}
		cons, err := cjs.Consumer(ctx, "EV", "w")
		if err != nil {
			t.Fatal(err)
		}
		var s seen
		if messages {
			it, err := e.cst.Messages(cons, claimcheck.DeleteAfterRead())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(it.Stop)
			go func() {
				for {
					m, err := it.Next()
					var re *claimcheck.ResolveError
					switch {
					case errors.As(err, &re):
						s.err(err)
					case err != nil:
						return // stopped
					default:
						s.msg(m.Data())
						_ = m.DoubleAck(context.Background())
					}
				}
			}()
		} else {
			cc, err := e.cst.Consume(cons, func(m jetstream.Msg) {
				s.msg(m.Data())
				_ = m.DoubleAck(context.Background())
			}, func(_ jetstream.Msg, err error) { s.err(err) }, claimcheck.DeleteAfterRead())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(cc.Stop)
		}
		if fault != nil {
			fault(e)
		}
		data := payload(bigSize, 10)
		if _, err := e.ast.PublishJetStream(ctx, &nats.Msg{Subject: "ev.data", Data: data}); err != nil {
			t.Fatal(err)
		}
		s.check(t, data, msgs, errs, is)
		acons, err := ajs.Consumer(ctx, "EV", "w")
		if err != nil {
			t.Fatal(err)
		}
		var info *jetstream.ConsumerInfo
		natstest.Eventually(t, settle, func() bool {
			info, err = acons.Info(ctx)
			return err == nil && info.NumAckPending == 0 && info.NumPending == 0
		}, "the message to be settled")
		if info.NumRedelivered != 0 {
			t.Errorf("%d redeliveries; the message must be settled once", info.NumRedelivered)
		}
		e.checkLeft(left)
		e.checkFaults()
	}
}

func cutAt(r natstest.Rule) func(e *env) {
	return func(e *env) { e.expect(e.cp.On(withAction(r, natstest.Cut))) }
}

func restartAt(r natstest.Rule) func(e *env) {
	return func(e *env) {
		e.expect(e.cp.On(withAction(withHook(r, func(natstest.Frame) { e.restart() }), natstest.Cut)))
	}
}

// claimcheck.Store's Subscribe, QueueSubscribe, Consume and Messages.
func TestSubscribeHelpers(t *testing.T) {
	t.Parallel()
	runRows(t, []fnRow{
		{"Subscribe: connection cut during the payload's download", coreSubRow(false, cutAt(chunkDown(2)), 1, 0, nil, 1)},
		{"Subscribe: server restart during the payload's download", coreSubRow(false, restartAt(chunkDown(2)), 1, 0, nil, 1)},
		{"Subscribe: connection cut when the read asks for the chunks", coreSubRow(false, cutAt(batchUp), 1, 0, nil, 1)},
		{"Subscribe: the payload gone when the message arrives", coreSubRow(false, purgeAt, 0, 1, claimcheck.ErrMissing, 0)},
		{"QueueSubscribe, DeleteAfterRead: connection cut during the download", coreSubRow(true, cutAt(chunkDown(2)), 1, 0, nil, 0)},
		{"QueueSubscribe, DeleteAfterRead: no fault", coreSubRow(true, nil, 1, 0, nil, 0)},
		{"Consume, DeleteAfterRead: connection cut during the download", jsSubRow(false, cutAt(chunkDown(2)), 1, 0, nil, 0)},
		{"Consume, DeleteAfterRead: server restart during the download", jsSubRow(false, restartAt(chunkDown(2)), 1, 0, nil, 0)},
		{"Consume: the payload gone when the message arrives (Term'd)", jsSubRow(false, purgeAt, 0, 1, claimcheck.ErrMissing, 0)},
		{"Messages, DeleteAfterRead: connection cut during the download", jsSubRow(true, cutAt(chunkDown(2)), 1, 0, nil, 0)},
		{"Messages: the payload gone when the message arrives (Term'd)", jsSubRow(true, purgeAt, 0, 1, claimcheck.ErrMissing, 0)},
	})
}
