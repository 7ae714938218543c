package claimcheck

import (
	"context"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/internal/connlimit"

	"github.com/natssend/natssend/internal/objstore"
)

// objReader reads one object with direct gets (see fetch.go): its meta
// data by last-by-subject, its chunks in batches by subject, each batch
// asked for from the sequence after the last chunk received. It creates
// nothing on the server.
type objReader struct {
	s         *Store
	rd        *objstore.Reader // direct gets of the reference's bucket and domain
	ctx       context.Context
	cancel    context.CancelFunc
	subject   string
	ref       *refInfo
	info      *jetstream.ObjectInfo
	chunkSubj string
	digest    hash.Hash  // the chunks so far, in the digest want names
	want      wantDigest // the meta data's digest (see chooseDigest)

	cur    []byte   // the chunk being read out (Read)
	queue  [][]byte // chunks received and checked, not yet read
	unread int      // the bytes in cur and queue

	inflight      *objstore.Batch // the batch request in flight, if any
	asked         int             // chunks asked for in it
	recv          int             // chunks received from it
	got           uint32          // chunks received
	lastSeq       uint64          // stream sequence of the last chunk received
	read          int64           // bytes received
	largest       int             // the largest chunk received
	directChecked bool            // the stream was asked whether it serves direct gets (direct)
	err           error           // what Read returns from now on
	later         error           // a failure met reading ahead, for the Read that needs the chunks it stopped
	done          bool            // every chunk received

	window int // chunks asked for per batch, at least
	wbytes int // bytes asked for per batch (0: window chunks)
}

// open starts a read of ref's object that asks for its chunks in batches
// of window chunks or, when that is more, of windowBytes bytes (at most
// maxReadWindow chunks); Open keeps at most one batch read ahead.
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
	return s.openWithin(ctx, cancel, subject, ref, window, windowBytes)
}

// openWithin is open within ctx as it is, which may have no deadline (a
// shared read's: see resolve); cancel ends ctx, and Close calls it.
func (s *Store) openWithin(ctx context.Context, cancel context.CancelFunc, subject string, ref *refInfo, window, windowBytes int) (*objReader, error) {
	ctx, stop := s.watchStream(ctx, at{bucket: ref.bucket, domain: ref.domain})
	end := cancel
	r := &objReader{s: s, rd: s.reader(ref), ctx: ctx, cancel: func() { stop(); end() }, subject: subject, ref: ref, window: window, wbytes: windowBytes}
	if err := r.start(); err != nil {
		_ = r.Close()
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
	return readError(r.ctx, r.ref, r.subject, err)
}

// readError is the *ResolveError of a read of ref for subject that failed
// with err within ctx: a permission violation that ended ctx is the cause
// where there is one (connlimit.DeniedCause), a timeout says so.
func readError(ctx context.Context, ref *refInfo, subject string, err error) error {
	if d := connlimit.DeniedCause(ctx); d != nil {
		return &ResolveError{Object: ref.name, Subject: subject, Err: d, Detail: "reading the stored payload was refused"}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
		return &ResolveError{Object: ref.name, Subject: subject, Err: err, Detail: "reading the stored payload timed out"}
	}
	return &ResolveError{Object: ref.name, Subject: subject, Err: err, Detail: "reading the stored payload"}
}

// start reads and checks the meta data and asks for the first batch of
// chunks: two requests, which for an object of a batch or less are all
// the read makes.
func (r *objReader) start() error {
	if si := r.s.stream.CachedInfo(); r.rd == r.s.rd && si != nil && !si.Config.AllowDirect {
		return r.fail(errors.ErrUnsupported, "the stream of bucket %q does not allow direct gets (allow_direct), which reads need", r.ref.bucket)
	}
	info, err := r.meta()
	if err != nil {
		return err
	}
	r.info = info
	if got := info.Metadata[metaSubjectKey]; !r.s.cfg.subjectOK(got, r.subject) {
		return r.fail(ErrSubjectMismatch, "stored for subject %q (a subject transform or mapping on the way? see WithSubjectBinding)", got)
	}
	if info.Opts != nil && info.Opts.Link != nil {
		return r.fail(ErrCorrupt, "the object is a link")
	}
	if bad := r.want.malformed(); bad != "" {
		// Checkable only at the end, but no chunk can make it match.
		return r.fail(ErrCorrupt, "%s", bad)
	}
	if int64(info.Size) != r.ref.size {
		return r.fail(ErrCorrupt, "%s header says %d bytes, the stored payload has %d", HeaderSize, r.ref.size, info.Size)
	}
	if info.Size == 0 {
		r.done = true
		return nil
	}
	if info.Chunks == 0 || uint64(info.Chunks) > info.Size || !validNUID(info.NUID) {
		// Every chunk holds a byte at least: more chunks than bytes would
		// make a read take (and hold) empty chunks by the thousand.
		return r.fail(ErrCorrupt, "meta data with %d chunks and NUID %q for %d bytes", info.Chunks, info.NUID, info.Size)
	}
	if err := r.reachable(); err != nil {
		return err
	}
	r.chunkSubj = chunkSubject(r.ref.bucket, info.NUID)
	return r.ask()
}

// reachable refuses, before any chunk is asked for, an object whose
// chunks cannot arrive on this connection. A server checks max_payload on
// what clients and leafnodes publish to it, not on what it delivers: a
// chunk of the server's own limit (every object-store client writes them
// at min(max_payload, 128 KiB)) reaches a reader on that server, or on
// another server of its cluster, as a direct-get reply above the limit.
// Across a leafnode the receiving server checks each message against its
// own max_payload and closes the whole link for one over it. So a chunk
// larger than a Store on this connection writes its own (chunkSize of the
// connection's limit) is read only when the bucket's stream is served
// here or by this server's cluster (see servedHere), and never when it is
// above the path cap (shim.CapPayload: the reader's word that a smaller
// limit lies on the way). The largest chunk is the declared chunk size or
// the whole object, whichever is smaller. Nothing is refused while the
// limit cannot be known (a reconnect); on a connection not made with
// shim.Connect the first read confirms it with one round trip.
func (r *objReader) reachable() error {
	limit, err := r.s.limit.Limit(r.ctx)
	if err != nil {
		return nil // the chunks' own reads will meet what this is
	}
	largest := min(int64(r.chunkSize()), int64(r.info.Size))
	reach := int64(chunkSize(limit, math.MaxInt))
	if largest <= reach {
		return nil
	}
	if pc := r.s.limit.PathCap(); pc > 0 && pc <= limit {
		return r.fail(errUnreachable, "its chunks of up to %d bytes are above the %d this connection's path can carry (the path cap of %d set with shim.CapPayload, less the direct get's headers; across a leafnode one larger message closes the whole link): store it with chunks that fit every reader (shim.CapPayload or WithMaxChunkSize on the publisher's side)", largest, reach, pc)
	}
	here, why := r.servedHere()
	if here {
		return nil
	}
	return r.fail(errUnreachable, "its chunks of up to %d bytes are above the %d this connection can receive (max_payload %d less the direct get's headers), and the bucket's stream is not served by this server or its cluster (%s), so they may cross a leafnode, which closes the whole link for one larger message: store it with chunks that fit every reader (shim.CapPayload or WithMaxChunkSize on the publisher's side)", largest, reach, limit, why)
}

// validNUID reports whether a NUID names one subject token of the
// characters a NUID has: a forged one must not make the chunk subject a
// wildcard that reads other objects' chunks.
func validNUID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}

// batch returns how many chunks one batch request asks for. The chunk
// size is the one the meta data declares; a false one changes only the
// batch size, which stays within [window, maxReadWindow], and the bytes
// each request may return (see ask).
func (r *objReader) batch() int {
	if r.wbytes <= 0 {
		return r.window
	}
	return max(r.window, min(r.wbytes/r.chunkSize(), maxReadWindow))
}

// chunkSize is the chunk size the meta data declares, or the object
// store's default.
func (r *objReader) chunkSize() int {
	if r.info.Opts != nil && r.info.Opts.ChunkSize > 0 {
		return int(r.info.Opts.ChunkSize)
	}
	return defaultChunkSize
}

// Read implements io.Reader.
func (r *objReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if err := r.ctx.Err(); err != nil {
		// Cancelled or past the deadline: stop, even with chunks queued.
		r.err = r.wrap(err)
		return 0, r.err
	}
	for len(r.cur) == 0 {
		switch {
		case len(r.queue) > 0:
			r.cur, r.queue = r.queue[0], r.queue[1:]
			continue
		case r.done:
			if err := r.finish(); err != nil {
				r.err = err
				return 0, err
			}
			r.err = io.EOF
			return 0, io.EOF
		case r.later != nil:
			r.err = r.wrap(r.later)
			return 0, r.err
		}
		data, err := r.next(true)
		if err != nil {
			r.err = r.wrap(err)
			return 0, r.err
		}
		r.queueChunk(data)
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	r.unread -= n
	if len(r.cur) == 0 {
		r.cur = nil // let the chunk go before the next one arrives
	}
	r.readAhead()
	return n, nil
}

// readAhead queues the chunks that have arrived meanwhile, without
// waiting, so that the next batch is asked for as soon as the window has
// room (see room). A failure is kept for the Read that needs the chunks
// it stopped: the chunks queued before it are still read out.
func (r *objReader) readAhead() {
	for r.later == nil && !r.done {
		data, err := r.next(false)
		if err != nil {
			r.later = err
			return
		}
		if data == nil {
			return
		}
		r.queueChunk(data)
	}
}

// queueChunk hashes a chunk (the digest covers the chunks in the order
// received, which is the order they are read) and queues it for Read.
func (r *objReader) queueChunk(data []byte) {
	r.digest.Write(data)
	r.queue = append(r.queue, data)
	r.unread += len(data)
}
