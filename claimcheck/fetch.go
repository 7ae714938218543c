package claimcheck

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/internal/objstore"
	"github.com/natssend/natssend/internal/xfer"
)

// maxBatchBytes caps the bytes one batch request asks for, whatever chunk
// size the meta data declares.
const maxBatchBytes = 16 << 20

// readBudget is what one Store's reads may have asked for and not yet
// received, together: a quarter of nats-server's default max_pending
// (64 MiB), past which the server closes the connection as a slow
// consumer.
const readBudget = 16 << 20

// meta reads the object's meta data: a direct get of the last message on
// its meta subject, which any replica answers. A replica that does not
// hold it (or no replica serving direct gets) is not the last word: the
// stream's leader is asked before the object is declared missing, since
// a replica may lag behind the upload the reference announced.
func (r *objReader) meta() (*jetstream.ObjectInfo, error) {
	s := r.s
	subj := "$O." + r.ref.bucket + ".M." + base64.URLEncoding.EncodeToString([]byte(r.ref.name))
	var m *objstore.Msg
	err := s.readCall(r.ctx, func(ctx context.Context) (err error) {
		m, err = r.rd.Last(ctx, subj) //natssend:reviewed retry: a read, no effect to repeat
		if errors.Is(err, objstore.ErrNotFound) || errors.Is(err, nats.ErrNoResponders) {
			m, err = r.rd.LeaderLast(ctx, subj) //natssend:reviewed retry: a read, no effect to repeat
		}
		return err
	})
	switch {
	case errors.Is(err, objstore.ErrNotFound):
		return nil, r.fail(ErrMissing, "not in bucket %q%s (expired, deleted or never stored)", r.ref.bucket, r.inDomain())
	case errors.Is(err, objstore.ErrNoStream):
		return nil, r.fail(ErrMissing, "bucket %q%s does not exist", r.ref.bucket, r.inDomain())
	case err != nil:
		return nil, err
	}
	v, err := r.rd.Decoded(subj, m.Data, decodeMeta)
	if err != nil {
		return nil, r.fail(ErrCorrupt, "malformed meta data: %v", err)
	}
	md := v.(*metaData) // shared with other reads of the same meta data: read only
	if md.info.Deleted {
		return nil, r.fail(ErrMissing, "deleted from bucket %q%s", r.ref.bucket, r.inDomain())
	}
	r.want = md.want
	r.digest = md.want.newHash()
	return &md.info, nil
}

// metaData is an object's decoded meta data and the digest a read checks
// (see chooseDigest).
type metaData struct {
	info jetstream.ObjectInfo
	want wantDigest
}

// decodeMeta decodes an object's meta data. Reads of one object share
// the result (objstore's Decoded), so that a claim check resolved by many
// subscribers decodes it once.
func decodeMeta(data []byte) (any, error) {
	md := &metaData{}
	if err := json.Unmarshal(data, &md.info); err != nil {
		return nil, err
	}
	md.want = chooseDigest(&md.info)
	return md, nil
}

// next returns the next chunk, asking for a batch when none is in
// flight. With wait false it returns nil, nil when no chunk has arrived,
// and asks for a batch only when the window has room.
//
// Lost replies (a broken chain of sequences, nothing for readStallCheck,
// a reconnect) are asked for again from the first missing chunk; a
// replica that has no chunk after the last one received makes the
// stream's leader say whether the rest is stored (see missing). Chunks
// cannot be skipped or repeated unnoticed: each batch's chain is
// checked, sequences only grow, and the count and total are checked
// against the meta data.
func (r *objReader) next(wait bool) ([]byte, error) {
	for {
		if err := r.ctx.Err(); err != nil {
			// Past the deadline or cancelled: chunks that arrive anyway
			// do not complete the read.
			return nil, err
		}
		if r.inflight == nil {
			if !wait && !r.room() {
				return nil, nil
			}
			if err := r.ask(); err != nil {
				return nil, err
			}
		}
		var m *objstore.Msg
		var err error
		if wait {
			m, err = r.inflight.Next(r.ctx, readStallCheck)
		} else if m, err = r.inflight.Poll(); m == nil && err == nil {
			return nil, nil
		}
		if err == nil {
			return r.accept(m)
		}
		if err := r.recover(err); err != nil {
			return nil, err
		}
	}
}

// room reports whether the next batch fits the window: Open keeps at
// most one batch read ahead of what the caller has read. A batch counts
// as what the meta data's chunk size makes it, but never more than the
// window's half or the largest chunk received, whichever is more: a
// chunk size that lies large must not let the read run ahead of its
// window.
func (r *objReader) room() bool {
	ahead := r.batch() * r.chunkSize()
	if r.wbytes > 0 {
		ahead = min(ahead, max(r.wbytes, r.largest))
	}
	return r.unread <= ahead
}

// ask sends the next batch request, from the chunk after the last one
// received. A failure to send (a reconnect) is tried again.
func (r *objReader) ask() error {
	n := min(r.batch(), int(r.info.Chunks-r.got))
	maxBytes := min(n*r.chunkSize(), maxBatchBytes)
	for {
		b, err := r.rd.Batch(r.ctx, r.chunkSubj, r.lastSeq+1, n, maxBytes) //natssend:reviewed retry: a read, no effect to repeat
		if err == nil {
			r.inflight, r.asked, r.recv = b, n, 0
			return nil
		}
		if r.ctx.Err() != nil || r.s.nc.IsClosed() {
			return err
		}
		if err := r.s.waitConnected(r.ctx); err != nil {
			return err
		}
		if err := r.pause(); err != nil {
			return err
		}
	}
}

// accept checks a chunk: the chunks so far must hold no more than the
// declared size and count, and after the last one the stream must hold
// no further chunk of the object. It ends the batch when it has given
// what it was asked for.
func (r *objReader) accept(m *objstore.Msg) ([]byte, error) {
	r.recv++
	r.got++
	r.lastSeq = m.Seq
	r.read += int64(len(m.Data))
	r.largest = max(r.largest, len(m.Data))
	if r.read > int64(r.info.Size) || r.got > r.info.Chunks {
		return nil, r.fail(ErrCorrupt, "stored chunks exceed the declared size")
	}
	switch {
	case r.got == r.info.Chunks:
		if m.HasPending && m.Pending > 0 {
			return nil, r.fail(ErrCorrupt, "more than the %d chunks the meta data says are stored", r.info.Chunks)
		}
		r.done = true
		r.endBatch()
	case r.recv == r.asked || r.inflight.Single():
		r.endBatch()
	case m.HasPending && m.Pending == 0:
		// The server has nothing after this chunk: settle it now rather
		// than with another request.
		r.endBatch()
		if err := r.missing(); err != nil {
			return nil, err
		}
	}
	return m.Data, nil
}

// recover decides what a batch's failure means: nil to ask again.
func (r *objReader) recover(err error) error {
	var pending uint64
	if r.inflight != nil {
		pending = r.inflight.Pending
	}
	r.endBatch()
	switch {
	case errors.Is(err, io.EOF):
		// The batch ended short of what was asked for: max_bytes, or
		// nothing more stored.
		if pending > 0 {
			return nil
		}
		return r.missing()
	case errors.Is(err, objstore.ErrNotFound):
		return r.missing()
	case errors.Is(err, objstore.ErrGap), errors.Is(err, objstore.ErrStalled):
		// Replies lost (a slow or broken link, a reconnect): ask again
		// from the first missing chunk once connected.
		return r.s.waitConnected(r.ctx)
	case errors.Is(err, nats.ErrNoResponders):
		// No replica serves direct gets at the moment (a restart, a
		// stream being placed): ask again shortly, unless the stream
		// does not serve them at all.
		if err := r.direct(); err != nil {
			return err
		}
		return r.pause()
	}
	return err
}

// direct asks the stream's leader, once per read, whether the stream
// serves direct gets: a bucket without allow_direct (another bucket than
// the Store's own, which start checks) would leave the read asking until
// its deadline.
func (r *objReader) direct() error {
	if r.directChecked {
		return nil
	}
	r.directChecked = true
	var ok bool
	err := r.s.readCall(r.ctx, func(ctx context.Context) (err error) {
		ok, err = r.rd.AllowsDirect(ctx) //natssend:reviewed retry: a read, no effect to repeat
		return err
	})
	switch {
	case err != nil:
		return nil // the pause and the next batch will tell
	case !ok:
		return r.fail(errors.ErrUnsupported, "the stream of bucket %q does not allow direct gets (allow_direct), which reads need", r.ref.bucket)
	}
	return nil
}

// missing settles a replica's word that no chunk follows the last one
// received: the stream's leader says how many of the object's chunks are
// stored. Fewer than the meta data says: ErrMissing (expired or deleted,
// before or during the read). All of them: the replica lags (after a
// failover a node that was down holds an older copy for a while), and
// the read asks again after replicaLagWait.
func (r *objReader) missing() error {
	stored, err := r.storedChunks()
	switch {
	case err != nil:
		return err
	case stored < uint64(r.info.Chunks):
		return r.fail(ErrMissing, "%d of %d chunks are stored (expired or deleted); %d were read", stored, r.info.Chunks, r.got)
	case stored > uint64(r.info.Chunks):
		return r.fail(ErrCorrupt, "%d chunks stored, the meta data says %d", stored, r.info.Chunks)
	}
	return r.pause()
}

// pause waits replicaLagWait, or until the read's context ends.
func (r *objReader) pause() error {
	t := time.NewTimer(replicaLagWait)
	defer t.Stop()
	select {
	case <-r.ctx.Done():
		return r.ctx.Err()
	case <-t.C:
		return nil
	}
}

// replicaLagWait is how long a read waits before it asks again when a
// replica lags or no replica answers.
const replicaLagWait = 100 * time.Millisecond

// storedChunks asks the bucket stream's leader how many chunks of the
// object it stores (none when the stream is gone).
func (r *objReader) storedChunks() (uint64, error) {
	var n uint64
	err := r.s.readCall(r.ctx, func(ctx context.Context) (err error) {
		n, err = r.rd.Stored(ctx, r.chunkSubj) //natssend:reviewed retry: a read, no effect to repeat
		return err
	})
	if errors.Is(err, objstore.ErrNoStream) {
		return 0, nil
	}
	return n, err
}

// inDomain names the reference's domain for an error, when it is not
// the Store's own.
func (r *objReader) inDomain() string {
	if r.ref.domain == "" {
		return ""
	}
	return fmt.Sprintf(" of JetStream domain %q", r.ref.domain)
}

// endBatch gives up the batch in flight, if any.
func (r *objReader) endBatch() {
	if r.inflight != nil {
		r.inflight.Close()
		r.inflight = nil
	}
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

// checkDigest checks the hash of the chunks against the stored digest:
// the HighwayHash-256 the Store records, or the object store's SHA-256
// (see chooseDigest). A malformed one was refused by start.
func (r *objReader) checkDigest() error {
	var sum [32]byte
	if !bytes.Equal(r.digest.Sum(sum[:0]), r.want.sum) {
		return r.fail(ErrCorrupt, "%s digest mismatch", xfer.DigestName(r.want.alg))
	}
	return nil
}

var errReadAfterClose = errors.New("claimcheck: read after Close")

// Close stops reading: replies still on their way are dropped. Nothing
// on the server is left to release.
func (r *objReader) Close() error {
	r.endBatch()
	r.cancel()
	r.queue, r.cur = nil, nil
	if r.err == nil {
		r.err = errReadAfterClose
	}
	return nil
}
