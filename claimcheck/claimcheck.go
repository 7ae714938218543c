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
	sent        *objstore.Budget // its uploads' bytes not yet acknowledged (see upWindow)
	domain      string           // the JetStream domain the bucket lives in ("" for none)
	domainKnown bool             // whether domain is known (see jsDomain)

	mu        sync.Mutex
	streams   map[string]streamLimit // subject -> cached max_msg_size of its stream
	lookupOff time.Time              // no stream lookups until then (one went unanswered)
	delProbe  *deleteProbe           // whether the user may delete payloads, once known (canDelete)

	readsMu sync.Mutex
	reads   map[readKey]*sharedRead // Resolves in progress (see resolve)

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
		rd: objstore.NewReader(nc, objstore.APIPrefix(js), streamName(cfg.bucket), readBudget), sent: objstore.NewBudget(uploadBudget)}
	s.sent.Adapt(sentDelay)
	s.sent.SetLimit(uploadStart)
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
