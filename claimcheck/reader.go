package claimcheck

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// objReader reads one object's chunks through an ephemeral pull consumer
// that requests readWindow chunks at a time.
type objReader struct {
	s       *Store
	ctx     context.Context
	cancel  context.CancelFunc
	subject string
	ref     *refInfo
	info    *jetstream.ObjectInfo
	cons    jetstream.Consumer
	msgs    jetstream.MessagesContext
	digest  hash.Hash
	cur     []byte
	got     uint32 // chunks received
	base    uint32 // chunks received before the current consumer
	lastSeq uint64 // stream sequence of the last chunk received
	read    int64  // bytes received
	err     error
	done    bool
	window  int // chunks requested ahead, at least
	wbytes  int // bytes requested ahead, at most maxReadWindow chunks (0: window chunks)
}

// open starts a read of ref's object that keeps window chunks requested
// ahead, or, when that is more, as many chunks as make up windowBytes (at
// most maxReadWindow).
func (s *Store) open(ctx context.Context, subject string, ref *refInfo, window, windowBytes int) (*objReader, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	var cancel context.CancelFunc
	if _, ok := ctx.Deadline(); ok {
		ctx, cancel = context.WithCancel(ctx)
	} else {
		ctx, cancel = context.WithTimeout(ctx, s.cfg.readTimeout)
	}
	r := &objReader{s: s, ctx: ctx, cancel: cancel, subject: subject, ref: ref, digest: sha256.New(), window: window, wbytes: windowBytes}
	if err := r.start(); err != nil {
		_ = r.Close() // releases the consumer; the start error is reported
		return nil, r.wrap(err)
	}
	return r, nil
}

func (r *objReader) fail(kind error, format string, args ...any) error {
	return &ResolveError{Object: r.ref.name, Subject: r.subject, Err: kind, Detail: fmt.Sprintf(format, args...)}
}

// wrap turns a transport error into a *ResolveError naming the object.
func (r *objReader) wrap(err error) error {
	var re *ResolveError
	if err == nil || errors.As(err, &re) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
		return &ResolveError{Object: r.ref.name, Subject: r.subject, Err: err, Detail: "reading the stored payload timed out"}
	}
	return &ResolveError{Object: r.ref.name, Subject: r.subject, Err: err, Detail: "reading the stored payload"}
}

func (r *objReader) start() error {
	s := r.s
	var info *jetstream.ObjectInfo
	err := s.readCall(r.ctx, func(ctx context.Context) (err error) {
		info, err = s.obs.GetInfo(ctx, r.ref.name)
		return err
	})
	switch {
	case errors.Is(err, jetstream.ErrObjectNotFound):
		return r.fail(ErrMissing, "not in bucket %q (expired, deleted or never stored)", s.cfg.bucket)
	case errors.Is(err, jetstream.ErrBucketNotFound):
		return r.fail(ErrMissing, "bucket %q does not exist", s.cfg.bucket)
	case err != nil:
		return err
	}
	r.info = info
	if got := info.Metadata[MetaSubject]; !s.cfg.subjectOK(got, r.subject) {
		return r.fail(ErrSubjectMismatch, "stored for subject %q (a subject transform or mapping on the way? see WithSubjectBinding)", got)
	}
	if info.Opts != nil && info.Opts.Link != nil {
		return r.fail(ErrCorrupt, "the object is a link")
	}
	if int64(info.Size) != r.ref.size {
		return r.fail(ErrCorrupt, "%s header says %d bytes, the stored payload has %d", HeaderSize, r.ref.size, info.Size)
	}
	if info.Size == 0 {
		return nil
	}
	for {
		if err := r.consume(0); err != nil {
			return err
		}
		pending := r.cons.CachedInfo().NumPending
		if pending == uint64(info.Chunks) {
			break
		}
		if pending > uint64(info.Chunks) {
			return r.fail(ErrCorrupt, "%d chunks stored, the meta data says %d", pending, info.Chunks)
		}
		// Fewer chunks than the meta data says. The consumer may sit on a
		// replica that is still catching up (after a failover, a node
		// that was down holds an older copy of the stream): ask the
		// stream's leader before declaring the payload gone.
		stored, err := r.storedChunks()
		if err != nil {
			return err
		}
		if stored < uint64(info.Chunks) {
			return r.fail(ErrMissing, "%d of %d chunks are stored (expired or deleted)", stored, info.Chunks)
		}
		r.dropConsumer()
		select {
		case <-r.ctx.Done():
			return r.ctx.Err()
		case <-time.After(replicaLagWait):
		}
	}
	return nil
}

// consume creates the read's consumer and its message iterator, from
// stream sequence from on (0: from the start), dropping the previous
// ones. Chunks received so far are kept (base).
func (r *objReader) consume(from uint64) error {
	if r.msgs != nil {
		r.msgs.Stop()
		r.msgs = nil
	}
	r.dropConsumer()
	cfg := jetstream.ConsumerConfig{
		FilterSubject:     chunkSubject(r.s.cfg.bucket, r.info.NUID),
		DeliverPolicy:     jetstream.DeliverAllPolicy,
		AckPolicy:         jetstream.AckNonePolicy,
		MaxDeliver:        1,
		InactiveThreshold: time.Minute,
		MemoryStorage:     true,
		Replicas:          1,
	}
	if from > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, from
	}
	var cons jetstream.Consumer
	err := r.s.readCall(r.ctx, func(ctx context.Context) (err error) {
		cons, err = r.s.js.CreateConsumer(ctx, streamName(r.s.cfg.bucket), cfg)
		return err
	})
	if err != nil {
		return err
	}
	r.cons, r.base = cons, r.got
	msgs, err := cons.Messages(jetstream.PullMaxMessages(r.batch()), jetstream.PullExpiry(readPullExpiry))
	if err != nil {
		return err
	}
	r.msgs = msgs
	return nil
}

// batch returns how many chunks the read keeps requested ahead. The chunk
// size is the one the meta data declares; a false one changes only the
// batch size, which stays within [window, maxReadWindow].
func (r *objReader) batch() int {
	if r.wbytes <= 0 {
		return r.window
	}
	chunk := defaultChunkSize
	if r.info.Opts != nil && r.info.Opts.ChunkSize > 0 {
		chunk = int(r.info.Opts.ChunkSize)
	}
	return max(r.window, min(r.wbytes/chunk, maxReadWindow))
}

// Read implements io.Reader.
func (r *objReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	for len(r.cur) == 0 {
		if r.done || r.info.Size == 0 {
			if err := r.finish(); err != nil {
				r.err = err
				return 0, err
			}
			r.err = io.EOF
			return 0, io.EOF
		}
		if err := r.next(); err != nil {
			r.err = r.wrap(err)
			return 0, r.err
		}
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	if len(r.cur) == 0 {
		r.cur = nil // let the chunk go before the next one arrives
	}
	return n, nil
}

// next receives the next chunk into r.cur, verifying order, size and (at
// the last chunk) the digest before any of its bytes are handed out.
func (r *objReader) next() error {
	data, err := r.receive()
	if err != nil {
		return err
	}
	r.digest.Write(data)
	if r.done {
		if err := r.finish(); err != nil {
			return err
		}
	}
	r.cur = data
	return nil
}

// receive returns the next chunk, verifying its order and that the chunks
// so far hold no more than the declared size; it sets r.done at the last
// chunk. It does not hash.
//
// A missed idle heartbeat (jetstream.ErrNoHeartbeat: no message for a
// while, for example because a pull request was lost or the process was
// starved) is not fatal: nats.go keeps the iterator usable and forgets
// its outstanding pull requests, so the next call issues a new one. The
// read goes on until ctx ends. Chunks cannot be skipped or repeated
// unnoticed: the consumer sequence is checked below.
func (r *objReader) receive() ([]byte, error) {
	var msg jetstream.Msg
	for {
		if r.msgs == nil {
			// A new consumer could not be made (see below): try again.
			if err := r.consume(r.lastSeq + 1); err != nil {
				select {
				case <-r.ctx.Done():
					return nil, r.ctx.Err()
				case <-time.After(replicaLagWait):
				}
				continue
			}
		}
		ctx, cancel := context.WithTimeout(r.ctx, readStallCheck)
		m, err := r.msgs.Next(jetstream.NextContext(ctx))
		cancel()
		if err == nil {
			msg = m
			break
		}
		if ctxErr := r.ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		switch {
		case errors.Is(err, jetstream.ErrNoHeartbeat):
			continue
		case errors.Is(err, context.DeadlineExceeded):
			// No chunk for readStallCheck: are the rest still stored?
			if gone, err := r.chunksGone(); err != nil || gone {
				return nil, err
			}
			// They are. The consumer may be lost (its node went down)
			// or sit on a replica that lags: go on with a new one from
			// the next chunk. Failing to create it is no verdict either.
			_ = r.consume(r.lastSeq + 1)
			continue
		}
		return nil, err
	}
	md, err := msg.Metadata()
	if err != nil {
		return nil, err
	}
	if md.Sequence.Consumer != uint64(r.got-r.base)+1 || (r.lastSeq > 0 && md.Sequence.Stream <= r.lastSeq) {
		return nil, fmt.Errorf("claimcheck: chunk %d of object %q lost in transit (got delivery %d)", r.got+1, r.ref.name, md.Sequence.Consumer)
	}
	r.lastSeq = md.Sequence.Stream
	data := msg.Data()
	r.got++
	r.read += int64(len(data))
	if r.read > int64(r.info.Size) || r.got > r.info.Chunks {
		return nil, r.fail(ErrCorrupt, "stored chunks exceed the declared size")
	}
	r.done = r.got == r.info.Chunks
	return data, nil
}

// chunksGone reports, as an ErrMissing error, when the consumer has
// nothing left to deliver although chunks are missing and the stream's
// leader confirms that they are no longer stored: they expired or were
// deleted after the read began. A failed lookup is no verdict (the read
// goes on until its deadline).
func (r *objReader) chunksGone() (bool, error) {
	if r.cons == nil {
		return false, nil
	}
	var info *jetstream.ConsumerInfo
	err := r.s.readCall(r.ctx, func(ctx context.Context) (err error) {
		info, err = r.cons.Info(ctx)
		return err
	})
	if err != nil {
		return false, nil
	}
	if info.NumPending == 0 && uint64(r.base)+info.Delivered.Consumer < uint64(r.info.Chunks) {
		stored, err := r.storedChunks()
		if err != nil || stored >= uint64(r.info.Chunks) {
			// A lagging replica: the chunks exist and will come.
			return false, nil
		}
		return true, r.fail(ErrMissing, "%d of %d chunks could be read; the rest expired or were deleted during the read", info.Delivered.Consumer, r.info.Chunks)
	}
	return false, nil
}

// replicaLagWait is how long a read waits before it asks again for a
// consumer when its first one sits on a replica that is catching up.
const replicaLagWait = 100 * time.Millisecond

// storedChunks asks the bucket stream's leader how many chunks of the
// object it stores.
func (r *objReader) storedChunks() (uint64, error) {
	subj := chunkSubject(r.s.cfg.bucket, r.info.NUID)
	var si *jetstream.StreamInfo
	err := r.s.readCall(r.ctx, func(ctx context.Context) (err error) {
		si, err = r.s.stream.Info(ctx, jetstream.WithSubjectFilter(subj))
		return err
	})
	if err != nil {
		return 0, err
	}
	return si.State.Subjects[subj], nil
}

// dropConsumer deletes the reader's consumer.
func (r *objReader) dropConsumer() {
	if r.cons == nil {
		return
	}
	name := r.cons.CachedInfo().Name
	r.cons = nil
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), 2*time.Second)
	_ = r.s.js.DeleteConsumer(ctx, streamName(r.s.cfg.bucket), name)
	cancel()
}

// finish checks the totals and the digest.
func (r *objReader) finish() error {
	if err := r.checkSize(); err != nil {
		return err
	}
	return r.checkDigest()
}

// checkSize checks that the chunks held the declared size.
func (r *objReader) checkSize() error {
	if r.read != int64(r.info.Size) {
		return r.fail(ErrCorrupt, "stored chunks hold %d bytes, the meta data says %d", r.read, r.info.Size)
	}
	return nil
}

// checkDigest checks the hash of the chunks against the stored digest.
func (r *objReader) checkDigest() error {
	want, err := jetstream.DecodeObjectDigest(r.info.Digest)
	if err != nil {
		return r.fail(ErrCorrupt, "malformed digest %q", r.info.Digest)
	}
	if !bytes.Equal(r.digest.Sum(nil), want) {
		return r.fail(ErrCorrupt, "SHA-256 digest mismatch")
	}
	return nil
}

// Close stops reading and deletes the ephemeral consumer.
func (r *objReader) Close() error {
	if r.msgs != nil {
		r.msgs.Stop()
		r.msgs = nil
	}
	r.dropConsumer()
	r.cancel()
	if r.err == nil {
		r.err = errors.New("claimcheck: read after Close")
	}
	return nil
}
