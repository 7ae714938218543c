package claimcheck

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/internal/telemetry"
)

// Option configures a Store.
type Option func(*config) error

type config struct {
	bucket         string
	ttl            time.Duration
	storage        jetstream.StorageType
	replicas       int
	maxObject      int64
	maxChunk       int
	readTimeout    time.Duration
	cleanupTimeout time.Duration
	window         int
	openWindow     int // Open's window in bytes
	bindSubject    bool
	subjectMatch   func(stored, received string) bool // nil: equality
	domains        map[string]bool                    // WithDomains
	tel            *telemetry.Config                  // telemetry options; nil: the globals
}

// WithBucket sets the object store bucket (default DefaultBucket).
// Senders and receivers must use the same bucket.
func WithBucket(name string) Option {
	return func(c *config) error {
		if name == "" {
			return fmt.Errorf("%w: claimcheck: empty bucket name", ErrInvalidOption)
		}
		c.bucket = name
		return nil
	}
}

// WithTTL sets how long stored payloads live (default DefaultTTL). It is
// applied when the bucket is created; an existing bucket keeps its TTL.
func WithTTL(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("%w: claimcheck: TTL must be positive, got %v", ErrInvalidOption, d)
		}
		c.ttl = d
		return nil
	}
}

// WithStorage sets the bucket's storage (default jetstream.FileStorage).
// It is applied when the bucket is created.
func WithStorage(st jetstream.StorageType) Option {
	return func(c *config) error {
		if st != jetstream.FileStorage && st != jetstream.MemoryStorage {
			return fmt.Errorf("%w: claimcheck: unknown storage type %v", ErrInvalidOption, st)
		}
		c.storage = st
		return nil
	}
}

// WithReplicas sets the bucket's replica count (default 1). It is applied
// when the bucket is created.
func WithReplicas(n int) Option {
	return func(c *config) error {
		if n < 1 || n > 5 {
			return fmt.Errorf("%w: claimcheck: replicas must be 1..5, got %d", ErrInvalidOption, n)
		}
		c.replicas = n
		return nil
	}
}

// WithMaxObjectSize sets the largest payload this Store stores and
// resolves (default and upper bound MaxSize). A larger payload is refused
// with ErrTooLarge before anything is stored; a claim check declaring a
// larger size is refused with ErrTooLarge before anything is read.
func WithMaxObjectSize(n int64) Option {
	return func(c *config) error {
		if n < 1 || n > MaxSize {
			return fmt.Errorf("%w: claimcheck: max object size must be 1..%d, got %d", ErrInvalidOption, MaxSize, n)
		}
		c.maxObject = n
		return nil
	}
}

// WithMaxChunkSize caps the size of the chunks a payload is stored in
// (default DefaultMaxChunkSize). Chunks are never larger than the
// connection's max_payload allows, whatever this says.
func WithMaxChunkSize(n int) Option {
	return func(c *config) error {
		if n < 1024 {
			return fmt.Errorf("%w: claimcheck: chunk size must be at least 1024, got %d", ErrInvalidOption, n)
		}
		c.maxChunk = n
		return nil
	}
}

// WithReadTimeout sets the bound Resolve and Open apply when the caller's
// context has no deadline (default DefaultReadTimeout). A context with a
// deadline is used as it is, however long.
func WithReadTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("%w: claimcheck: read timeout must be positive, got %v", ErrInvalidOption, d)
		}
		c.readTimeout = d
		return nil
	}
}

// WithCleanupTimeout bounds the clean-up after a failed upload or publish
// (default DefaultCleanupTimeout). It does not change how long an upload
// waits for each chunk's acknowledgement, which is a fixed 10 s.
func WithCleanupTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("%w: claimcheck: cleanup timeout must be positive, got %v", ErrInvalidOption, d)
		}
		c.cleanupTimeout = d
		return nil
	}
}

// WithSubjectBinding turns the check that a claim check was stored for the
// subject its message is received on on (the default) or off, for
// Resolve, Open, ResolveJetStream and the subscription helpers of this
// Store. Discard always checks.
//
// The binding is a security measure: with it, a publisher allowed on one
// subject who learnt an object's name cannot make receivers of that
// subject load a payload stored for another subject. But the subject a
// receiver sees is not always the one the sender published on: a stream's
// SubjectTransform, a source or mirror with subject transforms, a
// republish, or an account subject mapping or import changes it, and
// every genuine claim check through such a path fails with
// ErrSubjectMismatch. Turn the binding off for receivers behind such a
// path, or relax it with WithSubjectMatch. With the binding off, anyone
// who may publish to a subject the receiver reads and who knows (or
// learns, for example from another subject's traffic) an object name can
// have the receiver load that payload in place of the message: the
// object name is then the only secret. The size and digest checks still
// apply.
func WithSubjectBinding(on bool) Option {
	return func(c *config) error {
		c.bindSubject = on
		return nil
	}
}

// WithSubjectMatch relaxes the subject binding (see WithSubjectBinding):
// a claim check resolves when match(stored, received) is true, where
// stored is the subject the sender published on (recorded with the
// object) and received the subject of the received message. Use it to
// accept exactly the subjects a known transform produces, keeping the
// binding otherwise. It turns the binding on.
func WithSubjectMatch(match func(stored, received string) bool) Option {
	return func(c *config) error {
		if match == nil {
			return fmt.Errorf("%w: claimcheck: nil subject match function", ErrInvalidOption)
		}
		c.bindSubject = true
		c.subjectMatch = match
		return nil
	}
}

// WithDomains names the other JetStream domains whose references this
// Store may resolve (and delete): a claim check stored at the edge (a
// leafnode with a domain of its own) and read on the hub, or the other
// way round. A reference names its domain (HeaderDomain); one of the
// Store's own domain, or of none, is read as always, one of a domain
// named here through that domain's JetStream API, and any other is
// refused with ErrForeignDomain naming it, before anything is read. A
// domain must be a non-empty NATS subject token.
func WithDomains(domains ...string) Option {
	return func(c *config) error {
		for _, d := range domains {
			if !validDomain(d) {
				return fmt.Errorf("%w: claimcheck: WithDomains: %q is not a JetStream domain", ErrInvalidOption, d)
			}
			if c.domains == nil {
				c.domains = make(map[string]bool)
			}
			c.domains[d] = true
		}
		return nil
	}
}

// subjectOK reports whether an object stored for stored may be resolved
// for a message received on received.
func (c *config) subjectOK(stored, received string) bool {
	switch {
	case !c.bindSubject:
		return true
	case c.subjectMatch != nil:
		return c.subjectMatch(stored, received)
	default:
		return stored == received
	}
}
