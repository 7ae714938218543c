package claimcheck

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/objstore"
)

const (
	// HeaderRef is the header that carries the name of the stored object.
	// A message with this header and an empty body is a claim check.
	HeaderRef = "Claim-Check"
	// HeaderSize is the header that carries the payload's size in bytes,
	// in decimal.
	HeaderSize = "Claim-Check-Size"
	// HeaderBucket is the header that carries the bucket the payload is
	// stored in. References made before it existed lack it: they mean
	// the reading Store's own bucket.
	HeaderBucket = "Claim-Check-Bucket"
	// HeaderDomain is the header that carries the JetStream domain of the
	// Store that stored the payload; it is absent when that Store has no
	// domain, and in references made before it existed, which mean the
	// reading Store's own domain.
	HeaderDomain = "Claim-Check-Domain"

	// DefaultBucket is the object store bucket claim checks use unless
	// WithBucket says otherwise.
	DefaultBucket = "claim_checks"
	// DefaultTTL is how long a stored payload lives unless WithTTL says
	// otherwise. It is the bucket's MaxAge, so it applies to every object in
	// the bucket, counted from when the object was stored.
	DefaultTTL = 7 * 24 * time.Hour
	// MaxSize is the largest payload a Store accepts (256 MiB).
	MaxSize = 256 << 20

	// DefaultReadTimeout bounds Resolve and Open (the whole read, not each
	// chunk) when the caller's context has no deadline. The object store's
	// own Get would use 5 s, which cuts large objects short.
	DefaultReadTimeout = 2 * time.Minute
	// DefaultCleanupTimeout bounds the clean-up that follows a failed
	// upload or a failed publish of a reference. Clean-up runs on a fresh
	// context so that it also happens when the caller's context is done.
	DefaultCleanupTimeout = 10 * time.Second
	// DefaultMaxChunkSize caps the chunk size; chunks are otherwise sized
	// to the connection's max_payload. It equals the object store's default
	// chunk size.
	DefaultMaxChunkSize = 128 << 10

	// metaSubjectKey is the key in the object's metadata that records the
	// subject the claim check was published on.
	metaSubjectKey = "claim-check-subject"
)

var (
	// ErrNotPublished is matched (errors.Is) by every error of Prepare,
	// PublishMsg and PublishJetStream for which the Store knows that
	// nothing was published: invalid input (a nil message, an empty
	// subject, ErrReservedHeader), ErrTooLarge, ErrClosed, a failed upload
	// (whatever was written is purged), a failed lookup of the
	// connection's limit, a publish the server or nats.go refused, and a
	// reference that was not published (its payload is deleted). It is
	// not matched when the outcome is unknown, for example a JetStream
	// publish whose acknowledgement timed out: the message may have been
	// stored. Errors matching ErrNotPublished keep their cause: errors.Is
	// and errors.As still see ErrTooLarge, *jetstream.APIError and the
	// rest. Prepare itself never publishes, so all its errors match.
	ErrNotPublished = errors.New("claimcheck: nothing was published")
	// ErrTooLarge is returned, before anything is stored or published, for
	// a body above the Store's maximum object size (MaxSize unless
	// WithMaxObjectSize set less), for a message whose claim-check
	// reference (its headers plus HeaderRef and HeaderSize) would not fit
	// max_payload or the stream's max_msg_size whatever the body, and for
	// a subject so long that the object's meta data, which records it,
	// does not fit max_payload. The error's text says which limit was
	// exceeded; from the publish methods it also matches ErrNotPublished.
	// Resolve and Open return it for a claim check whose declared size is
	// above the receiving Store's maximum.
	ErrTooLarge = errors.New("claimcheck: payload too large")
	// ErrMissing is returned by Resolve and Open when the referenced
	// object does not exist: it expired (TTL), was deleted, or never
	// existed. The error names the object.
	ErrMissing = errors.New("claimcheck: stored payload missing")
	// ErrCorrupt is returned by Resolve and Open for malformed claim-check
	// headers, a declared size that differs from the stored size, a digest
	// mismatch, or a reference bound to another subject
	// (ErrSubjectMismatch, which matches ErrCorrupt too).
	ErrCorrupt = errors.New("claimcheck: corrupt claim check")
	// ErrSubjectMismatch is returned by Resolve and Open when the object
	// was stored for a message on another subject than the one the
	// message was received on, and subject binding is on (see
	// WithSubjectBinding). errors.Is(err, ErrCorrupt) is also true for it.
	// It is also what a stream subject transform, a transforming source or
	// mirror, or an account subject mapping produces for a genuine claim
	// check, so Consume and Messages do not Term such a message (see
	// Consume).
	ErrSubjectMismatch error = &kindError{msg: "claimcheck: claim check bound to another subject", parent: ErrCorrupt}
	// ErrForeignDomain is returned by Resolve, Open and the subscription
	// helpers (wrapped in a *ResolveError whose Detail names the domain)
	// for a claim check stored in a JetStream domain that is neither the
	// Store's own nor one named with WithDomains. Nothing is read.
	ErrForeignDomain = errors.New("claimcheck: claim check stored in a JetStream domain this Store may not read")
	// ErrNoErrorHandler is returned by the subscription helpers when no
	// error callback is given: resolve failures must go somewhere.
	ErrNoErrorHandler = errors.New("claimcheck: an error handler is required")
	// ErrReservedHeader is returned by Prepare and the publish methods for
	// a message with a body that already carries HeaderRef or HeaderSize:
	// receivers would take it for a claim check and ignore its body.
	// Nothing is published; errors.Is(err, ErrNotPublished) is true for it.
	ErrReservedHeader error = &kindError{msg: "claimcheck: message already carries a claim-check header", parent: ErrNotPublished}
	// errReplyStored is returned by a reply claim check (package shim's,
	// through internal/claimops) when a reply to the same
	// reply subject is already stored (under replyObjectName), or is
	// stored by another responder while this one uploads: each reply
	// subject gets one stored reply, the first, and the caller reads that
	// one. Nothing of this reply is left stored; it also matches
	// ErrReservedHeader and ErrNotPublished (test for errReplyStored
	// first). A responder that gets it has nothing to send: another
	// responder has answered the request, or is answering it (should that
	// one then fail to send its reference, the caller gets no reply).
	errReplyStored error = &kindError{msg: "claimcheck: a reply to this reply subject is already stored", parent: ErrReservedHeader}
	// ErrClosed is returned by Prepare and the publish methods of a Store
	// after Close. Nothing is published; errors.Is(err, ErrNotPublished)
	// is true for it.
	ErrClosed error = &kindError{msg: "claimcheck: store closed", parent: ErrNotPublished}
	// ErrInvalidOption is wrapped by every error about an invalid option
	// value, in this package and in package shim (shim.ErrInvalidOption is
	// the same value): an out-of-range TTL, replica count, size or
	// timeout, an empty bucket name, a nil function, a negative reserve.
	// Options are checked before anything is created or sent. A nil
	// option (Option, SubscribeOpt, ConsumeOpt, MessagesOpt) is ignored.
	ErrInvalidOption = errors.New("natssend: invalid option")
)

// notPublishedError marks an error after which the Store knows nothing
// was published: it matches ErrNotPublished and unwraps to its cause.
type notPublishedError struct{ err error }

func (e *notPublishedError) Error() string        { return e.err.Error() }
func (e *notPublishedError) Unwrap() error        { return e.err }
func (e *notPublishedError) Is(target error) bool { return target == ErrNotPublished }

// notPublished marks err as "nothing was published" (nil stays nil).
func notPublished(err error) error {
	if err == nil || errors.Is(err, ErrNotPublished) {
		return err
	}
	return &notPublishedError{err}
}

// kindError is a sentinel error that also matches a parent sentinel.
type kindError struct {
	msg    string
	parent error
}

func (e *kindError) Error() string        { return e.msg }
func (e *kindError) Is(target error) bool { return target == e.parent }

// ResolveError reports a claim check that could not be resolved. Err is
// ErrMissing, ErrCorrupt, ErrSubjectMismatch, ErrTooLarge or the transport
// error (a timeout, a closed connection) that interrupted the read;
// errors.Is sees through it.
type ResolveError struct {
	Object  string // object name from the Claim-Check header; empty when the header is malformed
	Subject string // subject of the received message
	Detail  string // what was wrong, for people
	Err     error
}

// Error describes the failure, naming the object and the subject.
func (e *ResolveError) Error() string {
	s := e.Err.Error()
	if e.Object != "" {
		s += fmt.Sprintf(": object %q", e.Object)
	}
	if e.Subject != "" {
		s += fmt.Sprintf(" (message on %q)", e.Subject)
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns Err, so errors.Is sees ErrMissing, ErrCorrupt and the rest.
func (e *ResolveError) Unwrap() error { return e.Err }

// Permanent reports whether resolving the same message again with the
// same Store configuration cannot succeed: the object is missing, the
// reference is corrupt or bound to another subject, or the payload is
// above the receiver's maximum. Transport errors (timeouts, disconnects)
// are not permanent. ErrSubjectMismatch is permanent only for the Store's
// configuration (a receiver behind a subject transform resolves it with
// WithSubjectBinding(false)), which is why Consume Naks rather than Terms
// it.
func (e *ResolveError) Permanent() bool {
	return errors.Is(e.Err, ErrMissing) || errors.Is(e.Err, ErrCorrupt) || errors.Is(e.Err, ErrTooLarge)
}

// Store sends and resolves claim checks through one JetStream object store
// bucket on one connection. It is safe for concurrent use. Create one per
// connection with New and keep it for the connection's life.
//
// A Store publishes chunks through a JetStream context of its own, whose
// first asynchronous publish creates a reply subscription, a goroutine
// and a connection status listener that live until Close or until the
// connection closes. Call Close when the Store is no longer needed but
// the connection stays open; a Store used for the whole life of its
// connection needs no Close.
type Store struct {
	js          jetstream.JetStream
	pub         jetstream.JetStream // our own publisher: chunk uploads and header dry runs
	nc          *nats.Conn
	obs         jetstream.ObjectStore
	stream      jetstream.Stream // the bucket's stream
	cfg         config
	limit       *connlimit.State // the connection's one limit state, shared with shim
	rd          *objstore.Reader // direct gets of the bucket's stream
	domain      string           // the JetStream domain the bucket lives in ("" for none)
	domainKnown bool             // whether domain is known (see jsDomain)

	mu        sync.Mutex
	domainJS  map[string]jetstream.JetStream // WithDomains' domains, made on first use
	streams   map[string]streamLimit         // subject -> cached max_msg_size of its stream
	lookupOff time.Time                      // no stream lookups until then (one went unanswered)

	closeMu sync.RWMutex // held shared by every upload, exclusively by Close
	closed  bool
}

// Close releases the Store's publisher: it waits for uploads in progress
// (bounded by their contexts) and then removes the reply subscription,
// goroutine and status listener the publisher created
// (jetstream.JetStream.CleanupPublisher). After Close, Prepare and the
// publish methods return ErrClosed; Resolve, Open, Discard and the
// subscription helpers keep working, since they use only the JetStream
// context given to New. Close does not close the connection, and calling
// it again does nothing. It returns nil.
func (s *Store) Close() error {
	if s == nil {
		return nil
	}
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if !s.closed {
		s.closed = true
		s.pub.CleanupPublisher()
	}
	return nil
}

// beginUpload marks an upload in progress, so that Close waits for it; it
// fails with ErrClosed after Close. endUpload must follow a nil return.
func (s *Store) beginUpload() error {
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return ErrClosed
	}
	return nil
}

func (s *Store) endUpload() { s.closeMu.RUnlock() }

// isClosed reports whether Close was called.
func (s *Store) isClosed() bool {
	s.closeMu.RLock()
	defer s.closeMu.RUnlock()
	return s.closed
}

// New binds to the claim-check bucket, creating it when it does not exist.
// A bucket created concurrently by another process is bound to. Options
// about the bucket's shape (TTL, storage, replicas) apply only when New
// creates it.
func New(ctx context.Context, js jetstream.JetStream, opts ...Option) (*Store, error) {
	if js == nil {
		return nil, &bindError{msg: "claimcheck: nil JetStream", err: nats.ErrInvalidArg}
	}
	nc := js.Conn()
	if nc == nil {
		return nil, &bindError{msg: "claimcheck: JetStream without a connection", err: nats.ErrInvalidConnection}
	}
	cfg := config{
		bucket:         DefaultBucket,
		ttl:            DefaultTTL,
		storage:        jetstream.FileStorage,
		replicas:       1,
		maxObject:      MaxSize,
		maxChunk:       DefaultMaxChunkSize,
		readTimeout:    DefaultReadTimeout,
		cleanupTimeout: DefaultCleanupTimeout,
		window:         32,
		openWindow:     DefaultOpenWindow,
		bindSubject:    true,
	}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	cfg.tel.Fix()
	if ctx == nil {
		ctx = context.Background()
	}
	pub, err := jetstream.New(nc,
		jetstream.WithPublishAsyncMaxPending(1<<20),
		jetstream.WithPublishAsyncTimeout(chunkAckTimeout))
	if err != nil {
		return nil, err
	}
	s := &Store{js: js, pub: pub, nc: nc, cfg: cfg, limit: connlimit.For(nc), streams: make(map[string]streamLimit),
		rd: objstore.NewReader(nc, objstore.APIPrefix(js), streamName(cfg.bucket), readBudget)}
	if err := s.bind(ctx); err != nil {
		return nil, err
	}
	s.domain, s.domainKnown = s.jsDomain(ctx)
	return s, nil
}

// bind creates or binds the bucket and looks up its stream.
func (s *Store) bind(ctx context.Context) (err error) {
	// A request the account may not make gets no answer: end at the
	// server's report of it instead of at the deadline (only of bind's
	// own requests: another part of the service may be denied others).
	api := objstore.APIPrefix(s.js)
	ctx, stop := s.watchDenied(ctx, api+"STREAM.INFO."+streamName(s.cfg.bucket), api+"STREAM.CREATE."+streamName(s.cfg.bucket))
	defer stop()
	defer func() {
		if err != nil {
			if d := connlimit.DeniedCause(ctx); d != nil {
				err = &bindError{msg: fmt.Sprintf("claimcheck: binding bucket %q: %v", s.cfg.bucket, d), err: d}
			}
		}
	}()
	// Each request is bounded and made again after a transient failure
	// (readCall): one written just before the link broke gets no answer.
	// Creating the bucket again is harmless: the same configuration, or
	// the bucket another process (or our first try) created.
	var obs jetstream.ObjectStore
	err = s.bindCall(ctx, func(ctx context.Context) (err error) {
		obs, err = s.js.ObjectStore(ctx, s.cfg.bucket)
		return err
	})
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		err = s.bindCall(ctx, func(ctx context.Context) (err error) {
			obs, err = s.js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{
				Bucket:      s.cfg.bucket,
				Description: "natssend claim checks",
				TTL:         s.cfg.ttl,
				Storage:     s.cfg.storage,
				Replicas:    s.cfg.replicas,
			})
			if errors.Is(err, jetstream.ErrBucketExists) || errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
				// Another process created it between our lookup and create.
				obs, err = s.js.ObjectStore(ctx, s.cfg.bucket)
			}
			return err
		})
	}
	if err != nil {
		return bindFailed(s.cfg.bucket, "binding bucket", err)
	}
	var st jetstream.Stream
	err = s.bindCall(ctx, func(ctx context.Context) (err error) {
		st, err = s.js.Stream(ctx, streamName(s.cfg.bucket))
		return err
	})
	if err != nil {
		return bindFailed(s.cfg.bucket, "looking up the stream of bucket", err)
	}
	s.obs, s.stream = obs, st
	return nil
}

// bindCall is readCall for bind, except that any answer ends it at once
// (no responders, an API error such as JetStream not enabled for the
// account): New on a connection without JetStream fails, as it always
// did, instead of waiting for its context. Only a request that got no
// answer (a reply lost to a reconnect) is made again, and without a
// deadline of ctx's for at most bindTimeout.
func (s *Store) bindCall(ctx context.Context, call func(ctx context.Context) error) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, bindTimeout)
		defer cancel()
	}
	return s.callAgain(ctx, unanswered, call)
}

// unanswered reports whether a request's error says that it got no
// answer (transientRead, less no responders and the server's API errors).
func unanswered(err error) bool {
	var apiErr *jetstream.APIError
	return transientRead(err) && !errors.Is(err, nats.ErrNoResponders) && !errors.As(err, &apiErr)
}

// bindTimeout bounds bind's requests when New's context has no deadline.
const bindTimeout = 30 * time.Second

// Bucket returns the name of the bucket the Store uses.
func (s *Store) Bucket() string {
	if s == nil {
		return ""
	}
	return s.cfg.bucket
}

// Domain returns the JetStream domain the Store's bucket lives in, as
// its references name it: "" for none, or when the Store could not learn
// it (see HeaderDomain).
func (s *Store) Domain() string {
	if s == nil {
		return ""
	}
	return s.domain
}

// ObjectStore returns the bucket, for inspection and administration.
func (s *Store) ObjectStore() jetstream.ObjectStore {
	if s == nil {
		return nil
	}
	return s.obs
}

func streamName(bucket string) string { return "OBJ_" + bucket }
func chunkSubject(bucket, nuid string) string {
	return "$O." + bucket + ".C." + nuid
}

// cleanupContext returns a fresh context bounded by the cleanup timeout
// that keeps ctx's values but not its cancellation.
func (s *Store) cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithTimeout(context.WithoutCancel(ctx), s.cfg.cleanupTimeout)
}
