// Package jetstream is a stub of github.com/nats-io/nats.go/jetstream
// v1.55.0 for the analyzer's tests.
package jetstream

import (
	"context"

	"github.com/nats-io/nats.go"
)

type (
	JetStream interface {
		AccountInfo(ctx context.Context) (*AccountInfo, error)
		Conn() *nats.Conn
		Consumer(ctx context.Context, stream string, consumer string) (Consumer, error)
		Publisher
	}

	Publisher interface {
		Publish(ctx context.Context, subject string, payload []byte, opts ...PublishOpt) (*PubAck, error)
		PublishMsg(ctx context.Context, msg *nats.Msg, opts ...PublishOpt) (*PubAck, error)
		PublishAsync(subject string, payload []byte, opts ...PublishOpt) (PubAckFuture, error)
		PublishMsgAsync(msg *nats.Msg, opts ...PublishOpt) (PubAckFuture, error)
		PublishAsyncPending() int
	}

	AccountInfo struct{ Tier string }

	PublishOpt func(*pubOpts) error

	pubOpts struct{ id string }

	PubAck struct {
		Stream    string
		Sequence  uint64
		Duplicate bool
	}

	PubAckFuture interface {
		Ok() <-chan *PubAck
		Err() <-chan error
		Msg() *nats.Msg
	}

	JetStreamError interface {
		error
		APIError() error
	}

	jsError struct{ message string }
)

func (e *jsError) Error() string   { return e.message }
func (e *jsError) APIError() error { return nil }

var ErrNoStreamResponse JetStreamError = &jsError{message: "no response from stream"}

func New(nc *nats.Conn) (JetStream, error) { return nil, nil }

func WithMsgID(id string) PublishOpt { return func(o *pubOpts) error { o.id = id; return nil } }

func WithExpectLastSequence(seq uint64) PublishOpt { return func(*pubOpts) error { return nil } }

func WithExpectLastMsgID(id string) PublishOpt { return func(*pubOpts) error { return nil } }

type ErrorCode uint16

const (
	JSErrCodeStreamMessageExceedsMaximum ErrorCode = 10054
	JSErrCodeStreamNotFound              ErrorCode = 10059
	JSErrCodeStreamWrongLastSequence     ErrorCode = 10071
)

type APIError struct {
	Code        int       `json:"code"`
	ErrorCode   ErrorCode `json:"err_code"`
	Description string    `json:"description,omitempty"`
}

func (e *APIError) Error() string { return e.Description }

var ErrStreamMessageExceedsMaximum JetStreamError = &jsError{message: "message size exceeds maximum allowed"}

type Consumer interface {
	Fetch(batch int, opts ...FetchOpt) (MessageBatch, error)
	FetchBytes(maxBytes int, opts ...FetchOpt) (MessageBatch, error)
	FetchNoWait(batch int) (MessageBatch, error)
	Consume(handler MessageHandler, opts ...PullConsumeOpt) (ConsumeContext, error)
	Messages(opts ...PullMessagesOpt) (MessagesContext, error)
	Next(opts ...FetchOpt) (Msg, error)
}

type PushConsumer interface {
	Consume(handler MessageHandler, opts ...PushConsumeOpt) (ConsumeContext, error)
}

type (
	FetchOpt        func(*pubOpts) error
	NextOpt         interface{ configureNext() }
	PullConsumeOpt  interface{ configureConsume() }
	PushConsumeOpt  interface{ configurePushConsume() }
	PullMessagesOpt interface{ configureMessages() }
	MessageHandler  func(msg Msg)
	ConsumeContext  interface{ Stop() }
	MessagesContext interface {
		Next(opts ...NextOpt) (Msg, error)
		Stop()
	}
	MessageBatch interface {
		Messages() <-chan Msg
		Error() error
	}
)

type Msg interface {
	Data() []byte
	Headers() nats.Header
	Subject() string
	Ack() error
	Nak() error
}

// KeyValue is a JetStream key-value bucket.
type KeyValue interface {
	Get(ctx context.Context, key string) (KeyValueEntry, error)
	Put(ctx context.Context, key string, value []byte) (uint64, error)
	PutString(ctx context.Context, key string, value string) (uint64, error)
	Create(ctx context.Context, key string, value []byte, opts ...KVCreateOpt) (uint64, error)
	Update(ctx context.Context, key string, value []byte, revision uint64) (uint64, error)
	Delete(ctx context.Context, key string, opts ...KVDeleteOpt) error
}

// KVCreateOpt and KVDeleteOpt configure Create and Delete.
type (
	KVCreateOpt interface{ configureCreate() }
	KVDeleteOpt interface{ configureDelete() }
)

// KeyValueEntry is an entry of a bucket.
type KeyValueEntry interface {
	Value() []byte
	Revision() uint64
}

// ErrKeyExists: Create found the key.
var ErrKeyExists error = &jsError{message: "nats: key exists"}
