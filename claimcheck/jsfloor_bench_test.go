package claimcheck_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// jsTransfer is the JetStream leg of BenchmarkRoundTripFloor: the least a
// claim check stored in a stream can do, without the object store, its
// meta data or any hashing. It publishes the payload in chunks of the
// claim check's size to a memory stream of its own (the asynchronous
// publishes kept 32 ahead, as a Store's upload does), waits for every
// acknowledgement, then reads the chunks back through a consumer
// configured as a Store's read was before direct gets (8 chunks requested
// ahead), copying them into one buffer. With ordered set, the read is
// nats.go's default: an ordered consumer read with Messages' default
// options (500 messages requested ahead), which is what an application
// reading a stream gets without tuning. With fresh set, the read copies
// into a new buffer of the payload's size each run, as a read that
// returns its payload (Resolve, nats.go's GetBytes) must, instead of one
// reused across runs.
type jsTransfer struct {
	js      jetstream.JetStream
	stream  jetstream.Stream
	chunk   int
	buf     []byte
	ordered bool
	fresh   bool
	stored  time.Duration // how long the last run's store took, until every acknowledgement
}

func newJSTransfer(b *testing.B, url string, size int) *jsTransfer {
	nc, _ := connect(b, url)
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(32))
	if err != nil {
		b.Fatal(err)
	}
	stream, err := js.CreateStream(context.Background(), jetstream.StreamConfig{
		Name: "FLOOR", Subjects: []string{"floor.chunks"}, Storage: jetstream.MemoryStorage,
	})
	if err != nil {
		b.Fatal(err)
	}
	mp := nc.MaxPayload()
	return &jsTransfer{js: js, stream: stream, chunk: int(mp - min(mp/16, 512)), buf: make([]byte, 0, size)}
}

// run stores data and reads it back once, and returns how long that took.
func (t *jsTransfer) run(ctx context.Context, b *testing.B, data []byte) time.Duration {
	t.buf = t.buf[:0]
	t0 := time.Now()
	if t.fresh {
		t.buf = make([]byte, 0, len(data))
	}
	var futures []jetstream.PubAckFuture
	for off := 0; off < len(data); off += t.chunk {
		f, err := t.js.PublishMsgAsync(&nats.Msg{Subject: "floor.chunks", Data: data[off:min(off+t.chunk, len(data))]}, noRetry, stallWait)
		if err != nil {
			b.Fatal(err)
		}
		futures = append(futures, f)
	}
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			b.Fatal(err) // a chunk not stored: the read below would wait for it
		case <-ctx.Done():
			b.Fatal(ctx.Err())
		}
	}
	t.stored = time.Since(t0)
	if t.ordered {
		t.readOrdered(ctx, b, len(data))
		d := time.Since(t0)
		if err := t.stream.Purge(ctx); err != nil {
			b.Fatal(err)
		}
		return d
	}
	cons, err := t.stream.CreateConsumer(ctx, jetstream.ConsumerConfig{
		FilterSubject: "floor.chunks", DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy: jetstream.AckNonePolicy, MaxDeliver: 1, MemoryStorage: true, Replicas: 1,
	})
	if err != nil {
		b.Fatal(err)
	}
	msgs, err := cons.Messages(jetstream.PullMaxMessages(8))
	if err != nil {
		b.Fatal(err)
	}
	for len(t.buf) < len(data) {
		m, err := msgs.Next()
		if err != nil {
			b.Fatal(err)
		}
		t.buf = append(t.buf, m.Data()...)
	}
	d := time.Since(t0)
	msgs.Stop()
	if err := t.stream.DeleteConsumer(ctx, cons.CachedInfo().Name); err != nil {
		b.Fatal(err)
	}
	if err := t.stream.Purge(ctx); err != nil {
		b.Fatal(err)
	}
	return d
}

// noRetry: as a Store's upload, no publish is retried.
var noRetry = jetstream.WithRetryAttempts(0)

// stallWait: a publish that finds 32 unacknowledged waits for room, as a
// Store's upload does, however long a loaded machine takes; nats.go's
// default gives up after 200 ms (ErrTooManyStalledMsgs), which failed
// the benchmark on a machine with a load of 28.
var stallWait = jetstream.WithStallWait(time.Minute)

// readOrdered reads size bytes of chunks back with nats.go's defaults: an
// ordered consumer and Messages without options.
func (t *jsTransfer) readOrdered(ctx context.Context, b *testing.B, size int) {
	cons, err := t.js.OrderedConsumer(ctx, "FLOOR", jetstream.OrderedConsumerConfig{FilterSubjects: []string{"floor.chunks"}})
	if err != nil {
		b.Fatal(err)
	}
	msgs, err := cons.Messages()
	if err != nil {
		b.Fatal(err)
	}
	defer msgs.Stop()
	for len(t.buf) < size {
		m, err := msgs.Next()
		if err != nil {
			b.Fatal(err)
		}
		t.buf = append(t.buf, m.Data()...)
	}
}
