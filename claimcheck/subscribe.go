package claimcheck

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/internal/connlimit"
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

// The subscription helpers take one option type each, as jetstream's
// Consume and Messages do (jetstream.PullConsumeOpt,
// jetstream.PullMessagesOpt): an option that a call would ignore does not
// compile there. An invalid value is an error wrapping ErrInvalidOption,
// returned before anything is subscribed; a nil option is ignored.

// SubscribeOpt configures Subscribe and QueueSubscribe (DeleteAfterRead).
type SubscribeOpt interface{ applySubscribe(*subOpts) error }

// ConsumeOpt configures Consume (DeleteAfterRead, NakDelay,
// PullConsumeOpts).
type ConsumeOpt interface{ applyConsume(*subOpts) error }

// MessagesOpt configures Messages (DeleteAfterRead, NakDelay,
// PullMessagesOpts).
type MessagesOpt interface{ applyMessages(*subOpts) error }

// ReadOpt is an option every subscription helper takes.
type ReadOpt interface {
	SubscribeOpt
	ConsumeOpt
	MessagesOpt
}

// JetStreamOpt is an option of the JetStream helpers, Consume and
// Messages.
type JetStreamOpt interface {
	ConsumeOpt
	MessagesOpt
}

// readOpt, jsOpt, consumeOpt and messagesOpt are the option
// implementations, each for the calls that use it.
type (
	readOpt     func(*subOpts) error
	jsOpt       func(*subOpts) error
	consumeOpt  func(*subOpts) error
	messagesOpt func(*subOpts) error
)

func (f readOpt) applySubscribe(o *subOpts) error    { return f(o) }
func (f readOpt) applyConsume(o *subOpts) error      { return f(o) }
func (f readOpt) applyMessages(o *subOpts) error     { return f(o) }
func (f jsOpt) applyConsume(o *subOpts) error        { return f(o) }
func (f jsOpt) applyMessages(o *subOpts) error       { return f(o) }
func (f consumeOpt) applyConsume(o *subOpts) error   { return f(o) }
func (f messagesOpt) applyMessages(o *subOpts) error { return f(o) }

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
func DeleteAfterRead() ReadOpt {
	return readOpt(func(o *subOpts) error { o.deleteAfterRead = true; return nil })
}

// NakDelay sets the redelivery delay for JetStream messages whose payload
// could not be read for a transient reason (default DefaultNakDelay). It
// must be positive.
func NakDelay(d time.Duration) JetStreamOpt {
	return jsOpt(func(o *subOpts) error {
		if d <= 0 {
			return fmt.Errorf("%w: claimcheck: Nak delay must be positive, got %v", ErrInvalidOption, d)
		}
		o.nakDelay = d
		return nil
	})
}

// PullConsumeOpts passes options to jetstream.Consumer.Consume. Consume
// puts jetstream.PullMaxMessages(1) before them (see Consume), which a
// PullMaxMessages or PullMaxBytes among them replaces.
func PullConsumeOpts(opts ...jetstream.PullConsumeOpt) ConsumeOpt {
	return consumeOpt(func(o *subOpts) error { o.pullOpts = append(o.pullOpts, opts...); return nil })
}

// PullMessagesOpts passes options to jetstream.Consumer.Messages. Messages
// puts jetstream.PullMaxMessages(1) before them (see Store.Messages),
// which a PullMaxMessages or PullMaxBytes among them replaces.
func PullMessagesOpts(opts ...jetstream.PullMessagesOpt) MessagesOpt {
	return messagesOpt(func(o *subOpts) error { o.msgsOpts = append(o.msgsOpts, opts...); return nil })
}

// defaultPull is the default pull option of Consume and Messages: one
// message pulled at a time, which Consume resolves while the handler
// handles the one before (see Consume).
var defaultPull = jetstream.PullMaxMessages(1)

// parseSubOpts applies opts with apply, skipping nil ones, and returns
// the first error.
func parseSubOpts[O comparable](opts []O, apply func(O, *subOpts) error) (subOpts, error) {
	o := subOpts{nakDelay: DefaultNakDelay}
	var zero O
	for _, f := range opts {
		if f == zero {
			continue
		}
		if err := apply(f, &o); err != nil {
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
	return s.subscribe(func() (*nats.Subscription, error) { return s.nc.Subscribe(subject, cb) })
}

// QueueSubscribe is Subscribe in a queue group. Each message reaches one
// member, so DeleteAfterRead is safe here when every member uses it.
func (s *Store) QueueSubscribe(subject, queue string, h MsgHandler, onErr ErrorHandler, opts ...SubscribeOpt) (*nats.Subscription, error) {
	cb, err := s.coreHandler(h, onErr, opts)
	if err != nil {
		return nil, err
	}
	return s.subscribe(func() (*nats.Subscription, error) { return s.nc.QueueSubscribe(subject, queue, cb) })
}

// subscribe makes a subscription and, on a connection made by
// shim.Connect, waits a round trip for the server's verdict: a refused
// subscription is a *connlimit.Denial (errors.Is
// nats.ErrPermissionViolation, the subject named), with nothing left
// subscribed.
func (s *Store) subscribe(mk func() (*nats.Subscription, error)) (*nats.Subscription, error) {
	sub, err := s.limit.Subscribe(connlimit.DefaultFlushTimeout, mk)
	if err != nil {
		return nil, fmt.Errorf("claimcheck: subscribing: %w", err)
	}
	return sub, nil
}

func (s *Store) coreHandler(h MsgHandler, onErr ErrorHandler, opts []SubscribeOpt) (nats.MsgHandler, error) {
	if h == nil {
		return nil, fmt.Errorf("%w: claimcheck: nil message handler", nats.ErrInvalidArg)
	}
	if onErr == nil {
		return nil, ErrNoErrorHandler
	}
	o, err := parseSubOpts(opts, SubscribeOpt.applySubscribe)
	if err != nil {
		return nil, err
	}
	return func(m *nats.Msg) {
		var failed error
		ctx, op, t := s.startConsumer(m.Subject, m.Header, len(m.Data))
		defer func() { endConsumer(ctx, &op, failed) }()
		ref, err := s.parse(m)
		if err != nil {
			failed = err
			onErr(m, err)
			return
		}
		if ref == nil {
			h(tracedMsg(ctx, t, m))
			return
		}
		data, err := s.Resolve(ctx, m)
		if err != nil {
			failed = err
			onErr(m, err)
			return
		}
		h(tracedMsg(ctx, t, resolvedMsg(m, data)))
		if o.deleteAfterRead {
			if err := s.deleteAfterRead(ref); err != nil {
				onErr(m, err)
			}
		}
	}, nil
}

// resolvedMsg returns a copy of the claim check m with its payload and
// without the claim-check headers.
func resolvedMsg(m *nats.Msg, data []byte) *nats.Msg {
	h := cloneHeader(m.Header)
	dropRefHeaders(h)
	return &nats.Msg{Subject: m.Subject, Reply: m.Reply, Header: h, Data: data, Sub: m.Sub}
}

func (s *Store) deleteAfterRead(ref *refInfo) error {
	ctx, cancel := s.cleanupContext(context.Background())
	defer cancel()
	loc := s.refAt(ref)
	if err := s.deleteObjectAt(ctx, loc, ref.name); err != nil {
		return fmt.Errorf("claimcheck: deleting object %q%s after read: %w (the bucket's TTL removes it)", ref.name, s.describeAt(loc), err)
	}
	return nil
}
