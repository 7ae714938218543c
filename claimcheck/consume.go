package claimcheck

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ResolveJetStream is Resolve for a message from a JetStream consumer.
// msg.Subject() is the subject the stream stored the message under: the
// subject it was published on, unless a stream SubjectTransform, a
// transforming source or mirror, or an account mapping changed it. With
// subject binding on (the default) the object must have been stored for
// that subject (see WithSubjectBinding and WithSubjectMatch). A nil msg
// gives a *ResolveError wrapping nats.ErrInvalidMsg.
func (s *Store) ResolveJetStream(ctx context.Context, msg jetstream.Msg) ([]byte, error) {
	if msg == nil {
		return nil, &ResolveError{Err: nats.ErrInvalidMsg, Detail: "nil message"}
	}
	return s.Resolve(ctx, &nats.Msg{Subject: msg.Subject(), Header: msg.Headers(), Data: msg.Data()})
}

// Consume consumes c and calls h with each message's payload resolved: h
// gets a jetstream.Msg whose Data is the payload and whose Headers lack the
// claim-check headers; acknowledging it acknowledges the original. While a
// large payload is read, the message's ack timer is kept from expiring
// (InProgress).
//
// A message that cannot be resolved never reaches h and is never acked:
// a permanent failure (ErrMissing, ErrCorrupt, ErrTooLarge: retrying
// cannot help) is Term'd with the reason; ErrSubjectMismatch and any other
// failure (timeout, disconnect) are Nak'd with NakDelay. Then onErr
// (required) gets the message and the error. ErrSubjectMismatch is not
// Term'd because it is what a stream SubjectTransform, a transforming
// source or mirror, or an account mapping produces for a genuine claim
// check: on a work-queue stream a Term would delete the message. Nak'd,
// it is redelivered (up to the consumer's MaxDeliver) until a receiver
// configured with WithSubjectBinding(false) or WithSubjectMatch resolves
// it, or onErr gives up on it; onErr sees it on every redelivery. Nor is
// a payload whose chunks are larger than this connection can receive
// (ErrTooLarge, stored behind a higher max_payload): another reader, or
// this one once the limit on the path is raised, can read it.
//
// Keeping the handler busy: h runs on a goroutine of its own, one message
// at a time in order, while nats.go's Consume callback pulls and resolves
// the next message, so that when h returns its next message is there with
// its payload read (a slow handler never waits for a pull or a read, a
// fast one waits at most for one). Consume pulls one message at a time
// (PullMaxMessages(1) unless PullConsumeOpts sets PullMaxMessages or
// PullMaxBytes): the message being resolved and then waiting for h is kept
// in progress (InProgress) until h takes it, so no message waits with its
// AckWait running. A larger batch leaves the messages nats.go holds beyond
// that one unseen, their AckWait running, so they are redelivered
// (duplicates) when handling the ones before them takes longer than
// AckWait: raise it only for consumers whose AckWait covers the batch's
// processing time. After Stop, a message resolved and not yet handed to
// h is Nak'd (redelivered at once); Closed is closed once h has returned
// for the last time.
func (s *Store) Consume(c jetstream.Consumer, h jetstream.MessageHandler, onErr JetStreamErrorHandler, opts ...ConsumeOpt) (jetstream.ConsumeContext, error) {
	if c == nil || h == nil {
		return nil, fmt.Errorf("%w: claimcheck: nil consumer or handler", nats.ErrInvalidArg)
	}
	if onErr == nil {
		return nil, ErrNoErrorHandler
	}
	o, err := parseSubOpts(opts, ConsumeOpt.applyConsume)
	if err != nil {
		return nil, err
	}
	ackWait := ackWaitOf(c)
	a := newAheadConsume()
	cb := func(msg jetstream.Msg) {
		ctx, op, t := s.startConsumer(msg.Subject(), msg.Headers(), len(msg.Data()))
		rm, err := s.resolveJS(ctx, msg, ackWait, &o, onErr)
		job := func() {
			defer endConsumer(ctx, &op, err)
			if err != nil {
				onErr(msg, err)
				return
			}
			h(tracedJSMsg(ctx, t, rm))
		}
		if err != nil {
			// Already Term'd or Nak'd: only the error handler is left.
			if !a.handOff(job) {
				job()
			}
			return
		}
		// Resolved: kept in progress until the worker takes it.
		stop := keepInProgress(msg, ackWait)
		ran := a.handOff(job)
		stop()
		if !ran {
			_ = msg.Nak()
			endConsumer(ctx, &op, errConsumeStopped)
		}
	}
	cc, err := c.Consume(cb, append([]jetstream.PullConsumeOpt{defaultPull}, o.pullOpts...)...)
	if err != nil && len(o.pullOpts) > 0 && errors.Is(err, jetstream.ErrInvalidOption) {
		// The caller's options set PullMaxBytes, which nats.go refuses
		// together with PullMaxMessages: theirs alone decide the batch.
		// Consume checks its options before it subscribes or pulls.
		cc, err = c.Consume(cb, o.pullOpts...)
	}
	if err != nil {
		return nil, err
	}
	a.start(cc)
	return a, nil
}

// errConsumeStopped is the outcome of a message resolved after Consume
// was stopped: Nak'd, not handled.
var errConsumeStopped = errors.New("claimcheck: consuming stopped before the message was handled; Nak'd")

// Messages returns an iterator over c whose Next returns messages with
// their payload resolved, as Consume passes them. A message that cannot be
// resolved is Term'd or Nak'd by Consume's rule and Next returns it with a
// *ResolveError; the iterator stays usable, so call Next again. Errors
// that are not *ResolveError come from the iterator itself. Like Consume
// it pulls one message at a time (PullMaxMessages(1) unless
// PullMessagesOpts sets PullMaxMessages or PullMaxBytes), so that no
// message waits in the client, its AckWait running, while Next reads a
// large payload. With DeleteAfterRead, an Ack, DoubleAck or Term whose
// payload could not be deleted returns that error although the message
// was settled (the bucket's TTL removes the payload).
func (s *Store) Messages(c jetstream.Consumer, opts ...MessagesOpt) (*Messages, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: claimcheck: nil consumer", nats.ErrInvalidArg)
	}
	o, err := parseSubOpts(opts, MessagesOpt.applyMessages)
	if err != nil {
		return nil, err
	}
	it, err := c.Messages(append([]jetstream.PullMessagesOpt{defaultPull}, o.msgsOpts...)...)
	if err != nil && len(o.msgsOpts) > 0 && errors.Is(err, jetstream.ErrInvalidOption) {
		// PullMaxBytes among the caller's options; see Consume.
		it, err = c.Messages(o.msgsOpts...)
	}
	if err != nil {
		return nil, err
	}
	return &Messages{s: s, it: it, o: o, ackWait: ackWaitOf(c)}, nil
}

// Messages iterates over a consumer's messages with payloads resolved.
type Messages struct {
	s       *Store
	it      jetstream.MessagesContext
	o       subOpts
	ackWait time.Duration
}

// Next returns the next message with its payload resolved. On a resolve
// failure it returns the (already Term'd or Nak'd) message and a
// *ResolveError.
func (m *Messages) Next(opts ...jetstream.NextOpt) (jetstream.Msg, error) {
	msg, err := m.it.Next(opts...)
	if err != nil {
		return nil, err
	}
	ctx, op, t := m.s.startConsumer(msg.Subject(), msg.Headers(), len(msg.Data()))
	rm, err := m.s.resolveJS(ctx, msg, m.ackWait, &m.o, nil)
	endConsumer(ctx, &op, err)
	if err != nil {
		return msg, err
	}
	return tracedJSMsg(ctx, t, rm), nil
}

// Stop stops the iterator (jetstream.MessagesContext.Stop).
func (m *Messages) Stop() { m.it.Stop() }

// Drain drains the iterator (jetstream.MessagesContext.Drain).
func (m *Messages) Drain() { m.it.Drain() }

func ackWaitOf(c jetstream.Consumer) time.Duration {
	if info := c.CachedInfo(); info != nil && info.Config.AckWait > 0 {
		return info.Config.AckWait
	}
	return 30 * time.Second // the server's default
}

// resolveJS resolves msg, settling it (Term or Nak, never Ack) on failure.
func (s *Store) resolveJS(ctx context.Context, msg jetstream.Msg, ackWait time.Duration, o *subOpts, onErr JetStreamErrorHandler) (jetstream.Msg, error) {
	ref, err := s.parseParts(msg.Subject(), msg.Headers(), len(msg.Data()))
	if err == nil && ref == nil {
		return msg, nil
	}
	var data []byte
	if err == nil {
		stop := keepInProgress(msg, ackWait)
		data, err = s.ResolveJetStream(ctx, msg)
		stop()
	}
	if err != nil {
		var re *ResolveError
		// Never Term on ErrSubjectMismatch: a subject transform or mapping
		// produces it for genuine claim checks (see Consume).
		if errors.As(err, &re) && re.Permanent() && !errors.Is(err, ErrSubjectMismatch) && !errors.Is(err, errUnreachable) {
			_ = msg.TermWithReason(truncate(err.Error(), 200))
		} else {
			_ = msg.NakWithDelay(o.nakDelay)
		}
		return nil, err
	}
	h := cloneHeader(msg.Headers())
	dropRefHeaders(h)
	return &resolvedJSMsg{Msg: msg, data: data, hdr: h, s: s, ref: ref, del: o.deleteAfterRead, onErr: onErr}, nil
}

// keepInProgress sends InProgress every half ack wait until stop is called.
func keepInProgress(msg jetstream.Msg, ackWait time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(max(ackWait/2, 100*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = msg.InProgress()
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// resolvedJSMsg is a JetStream message with its payload resolved.
type resolvedJSMsg struct {
	jetstream.Msg
	data  []byte
	hdr   nats.Header
	s     *Store
	ref   *refInfo
	del   bool
	onErr JetStreamErrorHandler
	once  sync.Once
}

func (m *resolvedJSMsg) Data() []byte         { return m.data }
func (m *resolvedJSMsg) Headers() nats.Header { return m.hdr }

func (m *resolvedJSMsg) Ack() error { return m.settled(m.Msg.Ack()) }
func (m *resolvedJSMsg) DoubleAck(ctx context.Context) error {
	return m.settled(m.Msg.DoubleAck(ctx))
}
func (m *resolvedJSMsg) Term() error { return m.settled(m.Msg.Term()) }
func (m *resolvedJSMsg) TermWithReason(reason string) error {
	return m.settled(m.Msg.TermWithReason(reason))
}

// settled deletes the payload after a successful final acknowledgement
// when DeleteAfterRead is on. A failed deletion goes to Consume's error
// handler; from a Messages iterator's message (no handler) the
// acknowledgement returns it, so that it is not lost: the message was
// settled, and the bucket's TTL removes the payload.
func (m *resolvedJSMsg) settled(err error) error {
	if err != nil || !m.del {
		return err
	}
	var derr error
	m.once.Do(func() {
		if derr = m.s.deleteAfterRead(m.ref); derr != nil && m.onErr != nil {
			m.onErr(m, derr)
			derr = nil
		}
	})
	if derr != nil {
		return fmt.Errorf("acknowledged; %w", derr)
	}
	return nil
}
