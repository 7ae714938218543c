package claimcheck

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/wire"
)

// Object names are 128 random bits in lower-case base32 without padding.
const nameLen = 26

var nameEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newName returns an unguessable object name.
func newName() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return nameEncoding.EncodeToString(b[:])
}

// nameFree refuses a chosen name that is already stored: a reply subject
// is used once, so an object of its name is another responder's reply to
// the same request (errReplyStored). It spares that upload; what decides
// is the meta message's conditional write (see store).
func (s *Store) nameFree(ctx context.Context, name string) error {
	err := s.readCall(ctx, func(ctx context.Context) error {
		_, err := s.obs.GetInfo(ctx, name)
		return err
	})
	switch {
	case errors.Is(err, jetstream.ErrObjectNotFound):
		return nil
	case err == nil:
		return fmt.Errorf("%w: an object named %q is already stored", errReplyStored, name)
	}
	return err
}

// validName reports whether name has the form newName produces.
func validName(name string) bool {
	if len(name) != nameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < '2' || c > '7') {
			return false
		}
	}
	return true
}

// chunkAckTimeout bounds the wait for one chunk's (or the meta message's)
// acknowledgement. It is independent of the cleanup timeout.
const chunkAckTimeout = 10 * time.Second

// noRetry is the publish option for every asynchronous publish of an
// upload. nats.go retries an asynchronous publish that met no responders
// from a timer (jetstream publish.go handleAsyncReply), reading the
// message's Data again at that time, possibly after store returned and
// the caller reused its buffer. Without retries nats.go copies Data into
// the connection's buffer inside PublishMsgAsync and never reads it again
// (no error or ack callbacks are set on the Store's publisher), so an
// unsettled future cannot touch the caller's data. A missing stream
// leader then fails the upload at once (nothing published) instead of
// half a second later.
var noRetry = jetstream.WithRetryAttempts(0)

// chunkSize returns the chunk size for a connection limit: the limit minus
// a little headroom (for headers a proxy or tracing layer may add), capped
// at maxChunk.
func chunkSize(limit int64, maxChunk int) int {
	headroom := min(limit/16, 512)
	c := limit - headroom
	if c > int64(maxChunk) {
		c = int64(maxChunk)
	}
	if c < 1 {
		c = 1
	}
	return int(c)
}

// metaMsg builds the object's meta message, in the format the object store
// itself writes (jetstream/object.go Put): the ObjectInfo as JSON with a
// zero ModTime, on $O.<bucket>.M.<base64url(name)>, with a subject rollup.
// With once (a chosen name: a reply's) the stream stores it only while no
// meta message of that name is stored, so that of two responders
// answering one request only the first stores its reply.
func (s *Store) metaMsg(info *jetstream.ObjectInfo, once bool) (*nats.Msg, error) {
	data, err := json.Marshal(info)
	if err != nil {
		return nil, err
	}
	m := nats.NewMsg(s.metaSubject(info.Name))
	m.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
	if once {
		m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, "0")
	}
	m.Data = data
	return m, nil
}

// metaSubject is the subject of object name's meta message.
func (s *Store) metaSubject(name string) string { return metaSubjectOf(s.cfg.bucket, name) }

// metaSubjectOf is the subject of object name's meta message in bucket.
func metaSubjectOf(bucket, name string) string {
	return "$O." + bucket + ".M." + base64.URLEncoding.EncodeToString([]byte(name))
}

// wrongLastSequence reports whether err is the stream's refusal of a
// conditional write (the meta message of a name already stored).
func wrongLastSequence(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) // the latter from replicated streams
}

// digestPlaceholder has the length of a real digest value.
var digestPlaceholder = jetstream.GetObjectDigestValue(sha256.New())

// storeError marks an error from storing a payload: nothing was
// published. It matches ErrNotPublished.
type storeError struct {
	size int
	err  error
}

func (e *storeError) Error() string {
	return fmt.Sprintf("claimcheck: storing the %d-byte payload failed, nothing was published: %v", e.size, e.err)
}
func (e *storeError) Unwrap() error        { return e.err }
func (e *storeError) Is(target error) bool { return target == ErrNotPublished }

// cleanupFailed is an upload's failure (err) whose clean-up did not
// finish either (cleanup): it matches err's sentinels and
// errCleanupIncomplete, not the clean-up's own cause (its deadline is not
// the upload's).
type cleanupFailed struct{ err, cleanup error }

func (e *cleanupFailed) Error() string {
	return fmt.Sprintf("%v; cleaning up the partial upload: %v", e.err, e.cleanup)
}
func (e *cleanupFailed) Unwrap() error        { return e.err }
func (e *cleanupFailed) Is(target error) bool { return target == errCleanupIncomplete }

// store writes data as a new object bound to subject and returns its name.
// limit is the connection's effective max_payload. The object is complete
// (every chunk and the meta message acknowledged) when store returns nil.
// On any error, including a cancelled ctx, whatever was written is purged
// before store returns (best effort, on a fresh bounded context; not
// possible on a closed connection, where the bucket's TTL removes it).
//
// When store returns, nothing reads data any more: the hashing goroutine
// has finished, and the chunk publishes run without nats.go's
// no-responders retry (noRetry), so a future still unsettled (its ack
// timer settles it later) holds a reference to data, which keeps the
// buffer from being collected until then, but never reads it.
//
// store writes the object store's own format rather than calling
// ObjectStore.Put because Put chooses the chunk subject itself and does not
// report it when it fails, so the chunks it leaves behind (it does when its
// context ends while it waits for the last acknowledgements, or when the
// connection drops) cannot be found and purged. Everything else (reads,
// deletes, TTL, bucket management) is the object store's.
func (s *Store) store(ctx context.Context, subject string, data []byte, limit int64, name string) (string, error) {
	if err := s.beginUpload(); err != nil {
		return "", err
	}
	defer s.endUpload()
	chunk := chunkSize(limit, s.cfg.maxChunk)
	if ml := s.bucketMaxMsgSize(); ml > 0 && int64(chunk) > ml {
		chunk = chunkSize(ml, s.cfg.maxChunk)
	}
	once := name != ""
	if !once {
		name = newName()
	} else if err := s.nameFree(ctx, name); err != nil {
		return "", &storeError{len(data), err}
	}
	id := newName() // the chunk subject token, like the object store's NUID
	nchunks := (len(data) + chunk - 1) / chunk
	info := &jetstream.ObjectInfo{
		ObjectMeta: jetstream.ObjectMeta{
			Name:     name,
			Metadata: map[string]string{metaSubjectKey: subject, metaDigestKey: highwayPlaceholder},
			Opts:     &jetstream.ObjectMetaOptions{ChunkSize: uint32(chunk)},
		},
		Bucket: s.cfg.bucket,
		NUID:   id,
		Size:   uint64(len(data)),
		Chunks: uint32(nchunks),
		Digest: digestPlaceholder,
	}
	// The meta message must fit too; check before writing anything.
	mm, err := s.metaMsg(info, once)
	if err != nil {
		return "", &storeError{len(data), err}
	}
	if n := wire.MsgSize(mm.Header, len(mm.Data)); int64(n) > limit {
		return "", &storeError{len(data), fmt.Errorf("%w: the subject is too long: the object's meta data records it (%d bytes) and would be a %d-byte message, above the connection's max_payload of %d bytes (the body's size does not matter)",
			ErrTooLarge, len(subject), n, limit)}
	}

	// A reconnect during the upload makes its clean-up wait for chunks
	// that reach the stream by another path (see verifyPurged).
	reconnects := s.nc.Stats().Reconnects
	// nats.go fails pending futures on a reconnect, but not when the
	// connection closes (they then wait for their ack timeout): watch for
	// that ourselves. Registered before the check, so no close is missed.
	closed := s.nc.StatusChanged(nats.CLOSED)
	defer s.nc.RemoveStatusListener(closed)
	if s.nc.IsClosed() {
		return "", &storeError{len(data), nats.ErrConnectionClosed}
	}

	// Hash on the other core while the chunks go out: the object store's
	// SHA-256 and the Store's HighwayHash-256 (see metaDigestKey), both
	// in one pass over each chunk.
	var digest, highway string
	hashed := make(chan struct{})
	go func() {
		defer close(hashed)
		digest, highway = payloadDigests(data, chunk)
	}()

	chunkSubj := chunkSubject(s.cfg.bucket, id)
	// The server drops a publish the account may not make and says so
	// only asynchronously: end the upload at its report, not at the
	// acknowledgement timeout.
	callerCtx := ctx // the clean-up's bound
	ctx, stop := s.watchDenied(ctx, chunkSubj, mm.Subject)
	defer stop()
	w := &upWindow{s: s, closed: closed}
	defer w.release()
	metaSent := false
	fail := func(err error) (string, error) {
		if metaSent && wrongLastSequence(err) {
			// Another responder's reply is stored under the name: ours is
			// not, and its meta message is theirs to keep.
			metaSent = false
			err = fmt.Errorf("%w: another reply to %q was stored first (%v)", errReplyStored, subject, err)
		} else if d := connlimit.DeniedCause(ctx); d != nil {
			err = fmt.Errorf("claimcheck: %w", d)
			if d.Op == "publish" && d.Subject == chunkSubj {
				// Every chunk went to the denied subject: nothing was stored.
				<-hashed
				return "", &storeError{len(data), err}
			}
		} else if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		<-hashed // no goroutine may read data after store returns
		moved := s.nc.Stats().Reconnects != reconnects
		if cerr := s.cleanUp(callerCtx, func(cctx context.Context) error {
			return s.purgeUpload(cctx, chunkSubj, mm.Subject, id, once, metaSent, moved)
		}); cerr != nil {
			if errors.Is(cerr, jetstream.ErrStreamNotFound) {
				// Nothing can be stored, and nothing was: say what is missing.
				err = fmt.Errorf("%w: the bucket %q no longer exists (deleted after the Store was made; make a new Store to create it again): %w", jetstream.ErrBucketNotFound, s.cfg.bucket, err)
			} else {
				err = &cleanupFailed{err: err, cleanup: cerr}
			}
		}
		return "", &storeError{len(data), err}
	}
	for off := 0; off < len(data); off += chunk {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		end := min(off+chunk, len(data))
		if _, err := w.publish(ctx, &nats.Msg{Subject: chunkSubj, Data: data[off:end]}); err != nil {
			return fail(err)
		}
	}
	<-hashed
	info.Digest = digest
	info.Metadata[metaDigestKey] = highway
	if mm, err = s.metaMsg(info, once); err != nil {
		return fail(err)
	}
	metaSent, err = w.publish(ctx, mm)
	if err == nil {
		err = w.drain(ctx)
	}
	if err != nil {
		return fail(err)
	}
	return name, nil
}

// ownAck checks that an upload's message was stored by the Store's own
// stream in its own domain. The object store's subjects are not prefixed
// by domain, so across a leafnode a same-named bucket of another domain
// can store them (and answer first): such an upload does not count, and
// is purged from the Store's stream (the other domain's copy is that
// domain's to remove; keep $O.> inside each domain with the leafnode's
// permissions).
func (s *Store) ownAck(ack *jetstream.PubAck) error {
	if ack == nil || (ack.Stream == streamName(s.cfg.bucket) && (!s.domainKnown || ack.Domain == s.domain)) {
		return nil
	}
	return fmt.Errorf("claimcheck: the upload was acknowledged by stream %q in domain %q, not by the bucket %q's stream in this Store's domain %q: another stream stores the object store's subjects (a same-named bucket of another domain across a leafnode? keep $O.> inside each domain)",
		ack.Stream, ack.Domain, s.cfg.bucket, s.domain)
}

// bucketMaxMsgSize returns the bucket stream's max_msg_size, or 0 when it
// has none.
func (s *Store) bucketMaxMsgSize() int64 {
	info := s.stream.CachedInfo()
	if info == nil || info.Config.MaxMsgSize <= 0 {
		return 0
	}
	return int64(info.Config.MaxMsgSize)
}
