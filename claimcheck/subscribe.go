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

// MsgHandler receives a message with its payload resolved: for a claim
// check, a copy of the message whose Data is the stored payload and whose
// headers no longer include HeaderRef and HeaderSize (Reply and Sub are
// kept, so Respond works); any other message is passed as it is.
type MsgHandler func(m *nats.Msg)

// ErrorHandler receives a Core NATS message that could not be resolved
// (err is a *ResolveError), or whose payload could not be deleted after
// read. It must not be nil: a failure is never dropped silently.
type ErrorHandler func(m *nats.Msg, err error)

// JetStreamErrorHandler receives a JetStream message that could not be
// resolved, after it was Term'd or Nak'd (see Consume), or whose payload
// could not be deleted after read.
type JetStreamErrorHandler func(msg jetstream.Msg, err error)

// SubscribeOpt configures the subscription helpers. An invalid value is
// an error wrapping ErrInvalidOption, returned before anything is
// subscribed; a nil SubscribeOpt is ignored.
type SubscribeOpt func(*subOpts) error

type subOpts struct {
	deleteAfterRead bool
	nakDelay        time.Duration
	pullOpts        []jetstream.PullConsumeOpt
	msgsOpts        []jetstream.PullMessagesOpt
}

// DefaultNakDelay is how long a JetStream message whose payload could not
// be read for a transient reason waits before it is redelivered.
const DefaultNakDelay = 5 * time.Second

// DeleteAfterRead deletes a claim check's payload once it has been handled:
// for Core NATS when the handler returns, for JetStream when the handler
// Acks, DoubleAcks or Terms the message (not on Nak: the redelivery needs
// the payload). Use it only where each message has exactly one reader: a
// queue group or a work-queue consumer. On a fan-out subject (several
// subscribers, several consumers, or later replays of a stream) the first
// reader to finish would delete the payload from under the others, so
// there the bucket's TTL removes payloads instead. With plain Ack (which
// the server does not confirm) a lost ack leads to a redelivery whose
// payload is gone: it is Term'd as ErrMissing. Use DoubleAck where that
// matters.
func DeleteAfterRead() SubscribeOpt {
	return func(o *subOpts) error { o.deleteAfterRead = true; return nil }
}

// NakDelay sets the redelivery delay for JetStream messages whose payload
// could not be read for a transient reason (default DefaultNakDelay). It
// must be positive.
func NakDelay(d time.Duration) SubscribeOpt {
	return func(o *subOpts) error {
		if d <= 0 {
			return fmt.Errorf("%w: claimcheck: Nak delay must be positive, got %v", ErrInvalidOption, d)
		}
		o.nakDelay = d
		return nil
	}
}

// PullConsumeOpts passes options to jetstream.Consumer.Consume. Consume
// puts jetstream.PullMaxMessages(1) before them (see Consume), which a
// PullMaxMessages or PullMaxBytes among them replaces.
func PullConsumeOpts(opts ...jetstream.PullConsumeOpt) SubscribeOpt {
	return func(o *subOpts) error { o.pullOpts = append(o.pullOpts, opts...); return nil }
}

// PullMessagesOpts passes options to jetstream.Consumer.Messages. Messages
// puts jetstream.PullMaxMessages(1) before them (see Store.Messages),
// which a PullMaxMessages or PullMaxBytes among them replaces.
func PullMessagesOpts(opts ...jetstream.PullMessagesOpt) SubscribeOpt {
	return func(o *subOpts) error { o.msgsOpts = append(o.msgsOpts, opts...); return nil }
}

// oneAtATime is the default pull option of Consume and Messages.
var oneAtATime = jetstream.PullMaxMessages(1)

func parseSubOpts(opts []SubscribeOpt) (subOpts, error) {
	o := subOpts{nakDelay: DefaultNakDelay}
	for _, f := range opts {
		if f == nil {
			continue
		}
		if err := f(&o); err != nil {
			return o, err
		}
	}
	return o, nil
}

// Subscribe subscribes to subject on the Store's connection and calls h
// with each message's payload resolved. Messages that cannot be resolved go
// to onErr (required) and not to h. Resolving happens on the
// subscription's goroutine, so a large payload delays the messages after
// it (nats.go's pending limits apply).
func (s *Store) Subscribe(subject string, h MsgHandler, onErr ErrorHandler, opts ...SubscribeOpt) (*nats.Subscription, error) {
	cb, err := s.coreHandler(h, onErr, opts)
	if err != nil {
		return nil, err
	}
	return s.nc.Subscribe(subject, cb)
}

// QueueSubscribe is Subscribe in a queue group. Each message reaches one
// member, so DeleteAfterRead is safe here when every member uses it.
func (s *Store) QueueSubscribe(subject, queue string, h MsgHandler, onErr ErrorHandler, opts ...SubscribeOpt) (*nats.Subscription, error) {
	cb, err := s.coreHandler(h, onErr, opts)
	if err != nil {
		return nil, err
	}
	return s.nc.QueueSubscribe(subject, queue, cb)
}

func (s *Store) coreHandler(h MsgHandler, onErr ErrorHandler, opts []SubscribeOpt) (nats.MsgHandler, error) {
	if h == nil {
		return nil, fmt.Errorf("%w: claimcheck: nil message handler", nats.ErrInvalidArg)
	}
	if onErr == nil {
		return nil, ErrNoErrorHandler
	}
	o, err := parseSubOpts(opts)
	if err != nil {
		return nil, err
	}
	return func(m *nats.Msg) {
		ref, err := s.parse(m)
		if err != nil {
			onErr(m, err)
			return
		}
		if ref == nil {
			h(m)
			return
		}
		data, err := s.Resolve(context.Background(), m)
		if err != nil {
			onErr(m, err)
			return
		}
		h(resolvedMsg(m, data))
		if o.deleteAfterRead {
			if err := s.deleteAfterRead(ref.name); err != nil {
				onErr(m, err)
			}
		}
	}, nil
}

// resolvedMsg returns a copy of the claim check m with its payload and
// without the claim-check headers.
func resolvedMsg(m *nats.Msg, data []byte) *nats.Msg {
	h := cloneHeader(m.Header)
	delete(h, HeaderRef)
	delete(h, HeaderSize)
	return &nats.Msg{Subject: m.Subject, Reply: m.Reply, Header: h, Data: data, Sub: m.Sub}
}

func (s *Store) deleteAfterRead(name string) error {
	ctx, cancel := s.cleanupContext(context.Background())
	defer cancel()
	if err := s.deleteObject(ctx, name); err != nil {
		return fmt.Errorf("claimcheck: deleting object %q after read: %w (the bucket's TTL removes it)", name, err)
	}
	return nil
}

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
// it, or onErr gives up on it; onErr sees it on every redelivery.
//
// Prefetch: Consume pulls one message at a time (PullMaxMessages(1)
// unless PullConsumeOpts sets PullMaxMessages or PullMaxBytes). h runs,
// and the payload is read, inside nats.go's Consume callback, and
// InProgress keeps only the current message's ack timer from expiring; a
// larger batch would leave the prefetched messages waiting in the client
// while a large payload is read, their AckWait running, so they would be
// redelivered (duplicates) when the read takes longer than AckWait. Raise
// it only for consumers whose AckWait covers the batch's processing time.
func (s *Store) Consume(c jetstream.Consumer, h jetstream.MessageHandler, onErr JetStreamErrorHandler, opts ...SubscribeOpt) (jetstream.ConsumeContext, error) {
	if c == nil || h == nil {
		return nil, fmt.Errorf("%w: claimcheck: nil consumer or handler", nats.ErrInvalidArg)
	}
	if onErr == nil {
		return nil, ErrNoErrorHandler
	}
	o, err := parseSubOpts(opts)
	if err != nil {
		return nil, err
	}
	ackWait := ackWaitOf(c)
	cb := func(msg jetstream.Msg) {
		rm, err := s.resolveJS(msg, ackWait, &o, onErr)
		if err != nil {
			onErr(msg, err)
			return
		}
		h(rm)
	}
	cc, err := c.Consume(cb, append([]jetstream.PullConsumeOpt{oneAtATime}, o.pullOpts...)...)
	if err != nil && len(o.pullOpts) > 0 && errors.Is(err, jetstream.ErrInvalidOption) {
		// The caller's options set PullMaxBytes, which nats.go refuses
		// together with PullMaxMessages: theirs alone decide the batch.
		// Consume checks its options before it subscribes or pulls.
		cc, err = c.Consume(cb, o.pullOpts...)
	}
	return cc, err
}

// Messages returns an iterator over c whose Next returns messages with
// their payload resolved, as Consume passes them. A message that cannot be
// resolved is Term'd or Nak'd by Consume's rule and Next returns it with a
// *ResolveError; the iterator stays usable, so call Next again. Errors
// that are not *ResolveError come from the iterator itself. Like Consume
// it pulls one message at a time (PullMaxMessages(1) unless
// PullMessagesOpts sets PullMaxMessages or PullMaxBytes), so that no
// message waits in the client, its AckWait running, while Next reads a
// large payload.
func (s *Store) Messages(c jetstream.Consumer, opts ...SubscribeOpt) (*Messages, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: claimcheck: nil consumer", nats.ErrInvalidArg)
	}
	o, err := parseSubOpts(opts)
	if err != nil {
		return nil, err
	}
	it, err := c.Messages(append([]jetstream.PullMessagesOpt{oneAtATime}, o.msgsOpts...)...)
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
	rm, err := m.s.resolveJS(msg, m.ackWait, &m.o, nil)
	if err != nil {
		return msg, err
	}
	return rm, nil
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
func (s *Store) resolveJS(msg jetstream.Msg, ackWait time.Duration, o *subOpts, onErr JetStreamErrorHandler) (jetstream.Msg, error) {
	ref, err := s.parseParts(msg.Subject(), msg.Headers(), len(msg.Data()))
	if err == nil && ref == nil {
		return msg, nil
	}
	var data []byte
	if err == nil {
		stop := keepInProgress(msg, ackWait)
		data, err = s.ResolveJetStream(context.Background(), msg)
		stop()
	}
	if err != nil {
		var re *ResolveError
		// Never Term on ErrSubjectMismatch: a subject transform or mapping
		// produces it for genuine claim checks (see Consume).
		if errors.As(err, &re) && re.Permanent() && !errors.Is(err, ErrSubjectMismatch) {
			_ = msg.TermWithReason(truncate(err.Error(), 200))
		} else {
			_ = msg.NakWithDelay(o.nakDelay)
		}
		return nil, err
	}
	h := cloneHeader(msg.Headers())
	delete(h, HeaderRef)
	delete(h, HeaderSize)
	return &resolvedJSMsg{Msg: msg, data: data, hdr: h, s: s, name: ref.name, del: o.deleteAfterRead, onErr: onErr}, nil
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
	name  string
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
// when DeleteAfterRead is on.
func (m *resolvedJSMsg) settled(err error) error {
	if err != nil || !m.del {
		return err
	}
	m.once.Do(func() {
		if derr := m.s.deleteAfterRead(m.name); derr != nil && m.onErr != nil {
			m.onErr(m, derr)
		}
	})
	return nil
}
